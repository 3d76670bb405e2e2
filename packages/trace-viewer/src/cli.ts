#!/usr/bin/env node
import { runTraceCli } from "./run-trace-cli.js";

process.exitCode = await runTraceCli(process.argv.slice(2), {
  out: (line) => console.log(line),
  error: (line) => console.error(line),
});
