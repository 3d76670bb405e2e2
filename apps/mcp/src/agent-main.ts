import { runAgentWithEverything } from "./agent-with-everything.js";

const result = await runAgentWithEverything();
if (result === undefined || result.isError) process.exitCode = 1;
