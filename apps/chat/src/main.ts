import { parseChatArgs, USAGE } from "./args.js";
import { runChat } from "./chat.js";

const args = parseChatArgs(process.argv.slice(2));
if (args.kind === "help") {
  console.log(USAGE);
} else if (args.kind === "error") {
  console.error(`chat: ${args.message}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  await runChat({ session: args.session, db: args.db });
}
