import { runTeamDemo } from "./team-demo.js";

const { final } = await runTeamDemo();
if (final === undefined || final.isError) process.exitCode = 1;
