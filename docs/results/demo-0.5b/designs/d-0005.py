Name: design_g1
Plan:

1. **Function Definitions**: Update and recall functions for updating and recalling the memory.

2. **Error Handling**: Identify and fix errors in the update function.
3. **Optimization**: Optimize the code for better performance.

### Missing Modules:
1. `tools` (the agent's tools) and `re` (the regular expression module).
