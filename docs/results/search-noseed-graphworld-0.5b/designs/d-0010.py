"""Host-side design 'memory_bank': atlas.memory.guidelines MemoryBank (strategy/recovery/optimization tips).

Trusted adapter in atlas.alma.baselines.host; it runs in the host process, not in the sandbox."""
import json

class MemoryBank:
    def __init__(self, path):
        self.path = path
        self.data = {}

    def update(self, episode):
        if episode.get("goal") not in self.data:
            self.data[episode["goal"]] = {}
        if episode.get("task") not in self.data[episode["goal"]]:
            self.data[episode["goal"]][episode.get("task")] = []
        self.data[episode["goal"]][episode.get("task")].append({
            "episode": episode,
            "advice": episode.get("advice"),
            "score": episode.get("score")
        })

    def recall(self, task):
        if task.get("goal") not in self.data:
            return ""
        if task.get("task") not in self.data[task.get("goal")]:
            return ""
        best_advice = max(self.data[task.get("goal")][task.get("task")], key=lambda x: x['score'])
        advice = best_advice.get("advice")
        if advice:
            return advice
        else:
            return "No advice available for this task."

    def save(self):
        with open(self.path, 'w') as f:
            json.dump(self.data, f, indent=4)
