"""atlas.infra"""
