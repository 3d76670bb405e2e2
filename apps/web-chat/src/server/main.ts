import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildPageIfNeeded, PAGE_DIR } from "./page-build.js";
import { startWebChatServer } from "./web-chat-server.js";

/** The port tried when neither `--port` nor `PORT` is given; a free one when it is taken. */
export const DEFAULT_PORT = 5173;

const USAGE = `Usage: web-chat [--port <n>] [--data-dir <folder>]

  --port <n>           the port on 127.0.0.1 (default $PORT, else ${DEFAULT_PORT}, or a free
                       port when ${DEFAULT_PORT} is taken; 0 for a free port)
  --data-dir <folder>  where the SQLite session file lives (default $WEB_CHAT_DATA_DIR, else
                       ${join(tmpdir(), "lattice-web-chat")})
  --help               print this help`;

let values: { port?: string; "data-dir"?: string; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      port: { type: "string" },
      "data-dir": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  }));
} catch (error) {
  console.error(`web-chat: ${(error as Error).message}\n\n${USAGE}`);
  process.exit(2);
}
if (values.help === true) {
  console.log(USAGE);
  process.exit(0);
}
const portText = values.port ?? process.env.PORT;
const port = portText === undefined || portText === "" ? undefined : Number(portText);
if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
  console.error(`web-chat: the port must be a number from 0 to 65535, not "${portText}".`);
  process.exit(2);
}
const dataDir =
  values["data-dir"] || process.env.WEB_CHAT_DATA_DIR || join(tmpdir(), "lattice-web-chat");

await buildPageIfNeeded();
const serverOptions = { dataDir, pageDir: PAGE_DIR };
const server = await startWebChatServer({ ...serverOptions, port: port ?? DEFAULT_PORT }).catch(
  (error: NodeJS.ErrnoException) => {
    // The default port is taken (another app, another web chat): take a free one.
    if (port === undefined && error.code === "EADDRINUSE") {
      return startWebChatServer({ ...serverOptions, port: 0 });
    }
    throw error;
  },
);
console.log(`web-chat: ${server.url}`);

let stopping = false;
const stop = () => {
  if (stopping) process.exit(130);
  stopping = true;
  void server.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
