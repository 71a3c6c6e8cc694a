"""no_memory: the floor every design is normalized against. Stores nothing, advises nothing."""


def update(memory, episode, tools):
    return None


def recall(memory, task, tools):
    return ""
