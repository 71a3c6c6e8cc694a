Name: improved_update
Plan: Update the `update` function to keep track of the number of times the agent has visited a room, and use this information to guide the advice. This allows the agent to remember where it has been and to provide more specific advice.
