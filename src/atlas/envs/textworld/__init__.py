"""atlas.envs.textworld"""
