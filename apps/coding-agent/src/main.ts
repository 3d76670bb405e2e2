import { runCodingAgent } from "./coding-agent.js";

const { result } = await runCodingAgent();
if (result === undefined || result.isError) process.exitCode = 1;
