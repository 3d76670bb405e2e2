import { parseAppArgs, USAGE } from "./args.js";
import { runCommand } from "./commands.js";

const args = parseAppArgs(process.argv.slice(2));
if (args.kind === "help") {
  console.log(USAGE);
} else if (args.kind === "error") {
  console.error(`approvals: ${args.message}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  // Ctrl-C stops a run in progress; it stays resumable. A second Ctrl-C leaves at once.
  const controller = new AbortController();
  process.on("SIGINT", () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort();
  });
  // Output piped into a program that quits early (`| head`): the command still finishes.
  let stdoutClosed = false;
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code !== "EPIPE") throw error;
    stdoutClosed = true;
  });
  process.exitCode = await runCommand(args.command, {
    db: args.db,
    env: process.env,
    print: (line) => {
      if (!stdoutClosed) process.stdout.write(`${line}\n`);
    },
    printError: (line) => process.stderr.write(`approvals: ${line}\n`),
    signal: controller.signal,
  });
}
