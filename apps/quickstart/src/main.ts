import { runQuickstart } from "./quickstart.js";

const result = await runQuickstart();
if (result === undefined || result.isError) process.exitCode = 1;
