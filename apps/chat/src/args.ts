import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

/** The session a chat uses when `--session` is not given. */
export const DEFAULT_SESSION = "default";

/** The database a chat uses when `--db` is not given: `apps/chat/.data/chat.sqlite`. */
export const DEFAULT_DB = fileURLToPath(new URL("../.data/chat.sqlite", import.meta.url));

/** How to start the chat, as `--help` prints it. */
export const USAGE = `Usage: chat [--session <name>] [--db <path>]

  --session <name>  the conversation to continue or start (default "${DEFAULT_SESSION}")
  --db <path>       the SQLite file that keeps the sessions (default ${DEFAULT_DB});
                    its folder is created if missing
  --help            print this help

Type a message and press Enter. Commands: /history, /resume, /sessions, /help, /exit.
Ctrl-C stops a running run (it can be resumed); at the prompt, Ctrl-C or Ctrl-D quits.`;

/** The command line, parsed. */
export type ChatArgs =
  | { readonly kind: "chat"; readonly session: string; readonly db: string }
  | { readonly kind: "help" }
  | { readonly kind: "error"; readonly message: string };

/**
 * Parses the chat's command line.
 *
 * @param argv - The arguments after the script, for example `process.argv.slice(2)`.
 * @returns The session and database to use, a request for help, or what was wrong.
 */
export function parseChatArgs(argv: readonly string[]): ChatArgs {
  let values: { session?: string; db?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        session: { type: "string" },
        db: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    return { kind: "error", message: error instanceof Error ? error.message : String(error) };
  }
  if (values.help === true) return { kind: "help" };
  const session = values.session ?? DEFAULT_SESSION;
  if (session.trim() === "") return { kind: "error", message: "--session must not be empty." };
  const db = values.db ?? DEFAULT_DB;
  if (db.trim() === "") return { kind: "error", message: "--db must not be empty." };
  return { kind: "chat", session, db };
}
