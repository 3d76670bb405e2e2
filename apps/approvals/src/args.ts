import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import type { JsonValue } from "agent-lattice";

/** The database the app uses when `--db` is not given: `apps/approvals/.data/approvals.sqlite`. */
export const DEFAULT_DB = fileURLToPath(new URL("../.data/approvals.sqlite", import.meta.url));

/** The environment variable that moves the actions log (default: next to the database). */
export const ACTIONS_LOG_VARIABLE = "APPROVALS_ACTIONS_LOG";

/** The environment variable that sets how long a deploy or rollback takes, in milliseconds. */
export const WORK_MS_VARIABLE = "APPROVALS_WORK_MS";

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));

/** How to use the app, as `--help` prints it. */
export const USAGE = `Usage: approvals [--db <path>] <command>

  run [--session <id>] "<task>"       run the ops agent on a task; when a call needs approval,
                                      print it and the commands that decide it, and exit
  pending <session>                   list the calls of the session that wait for a decision
  approve <session> <approvalId>... [--input '<json>']
  approve <session> --all             approve calls (--input: run the one call with this input)
  deny <session> <approvalId>... [--reason "<why>"]
  deny <session> --all [--reason "<why>"]
                                      deny calls; the model gets the reason
  resume <session>                    finish a run cut by a crash or Ctrl-C (no decision needed)
  list                                list the sessions and what each waits for

  --db <path>   the SQLite file that keeps the sessions; its folder is created if missing
                (default ${DEFAULT_DB})
  --help        print this help

A run resumes once every pending call of its step is decided: decide them in one command
(several ids, or --all), or one by one; earlier decisions wait in a file next to the database.`;

/** One command of the app. */
export type Command =
  | { readonly kind: "run"; readonly session: string | undefined; readonly task: string }
  | { readonly kind: "pending"; readonly session: string }
  | {
      readonly kind: "decide";
      readonly approve: boolean;
      readonly session: string;
      /** The approval ids named; empty with `all`. */
      readonly ids: readonly string[];
      /** `--all`: every pending call of the session. */
      readonly all: boolean;
      /** `--input`: the edited input of the one call approved. */
      readonly input: JsonValue | undefined;
      /** `--reason`: why the calls are denied. */
      readonly reason: string | undefined;
    }
  | { readonly kind: "resume"; readonly session: string }
  | { readonly kind: "list" };

/** The command line, parsed. */
export type ParsedArgs =
  | { readonly kind: "command"; readonly command: Command; readonly db: string }
  | { readonly kind: "help" }
  | { readonly kind: "error"; readonly message: string };

/** The options each command takes (`--db` and `--help` go with all). */
const COMMAND_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  run: ["session"],
  pending: [],
  approve: ["all", "input"],
  deny: ["all", "reason"],
  resume: [],
  list: [],
};

/**
 * Parses the app's command line.
 *
 * @param argv - The arguments after the script, for example `process.argv.slice(2)`.
 * @returns The command and the database (an absolute path), a request for help, or what was
 *   wrong.
 */
export function parseAppArgs(argv: readonly string[]): ParsedArgs {
  let values: {
    db?: string;
    session?: string;
    input?: string;
    reason?: string;
    all?: boolean;
    help?: boolean;
  };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      options: {
        db: { type: "string" },
        session: { type: "string" },
        input: { type: "string" },
        reason: { type: "string" },
        all: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: true,
    }));
  } catch (error) {
    return { kind: "error", message: error instanceof Error ? error.message : String(error) };
  }
  if (values.help === true) return { kind: "help" };
  const [name, ...rest] = positionals;
  if (name === undefined) return { kind: "error", message: "Name a command." };
  const allowed = COMMAND_OPTIONS[name];
  if (allowed === undefined) return { kind: "error", message: `Unknown command "${name}".` };
  for (const option of ["session", "input", "reason", "all"] as const) {
    if (values[option] !== undefined && !allowed.includes(option)) {
      return { kind: "error", message: `"${name}" takes no --${option}.` };
    }
  }
  const db = values.db ?? DEFAULT_DB;
  if (db.trim() === "") return { kind: "error", message: "--db must not be empty." };
  if (db === ":memory:") {
    return {
      kind: "error",
      message: "--db :memory: would forget the session when this process ends; name a file.",
    };
  }
  const command = commandOf(name, rest, values);
  if (typeof command === "string") return { kind: "error", message: command };
  return { kind: "command", command, db: resolve(db) };
}

function commandOf(
  name: string,
  rest: readonly string[],
  values: { session?: string; input?: string; reason?: string; all?: boolean },
): Command | string {
  if (name === "run") {
    const task = rest.join(" ").trim();
    if (task === "") return 'run needs a task, for example: run "deploy web v1.5.0 to production"';
    if (values.session !== undefined && values.session.trim() === "") {
      return "--session must not be empty.";
    }
    return { kind: "run", session: values.session, task };
  }
  if (name === "list") {
    return rest.length === 0 ? { kind: "list" } : `list takes no arguments, got "${rest[0]}".`;
  }
  const [session, ...ids] = rest;
  if (session === undefined || session.trim() === "") return `${name} needs a session id.`;
  if (name === "pending" || name === "resume") {
    return ids.length === 0 ? { kind: name, session } : `${name} takes one session id.`;
  }
  const all = values.all === true;
  if (all === ids.length > 0) {
    return all
      ? `${name}: give approval ids or --all, not both.`
      : `${name} needs the approval ids to decide, or --all ("pending ${session}" lists them).`;
  }
  let input: JsonValue | undefined;
  if (values.input !== undefined) {
    if (ids.length !== 1) return "--input goes with exactly one approval id.";
    try {
      input = JSON.parse(values.input) as JsonValue;
    } catch (error) {
      return `--input is not JSON: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (input === null || typeof input !== "object" || Array.isArray(input)) {
      return `--input must be a JSON object, like '{"service":"web","environment":"production","version":"v1.5.1"}'.`;
    }
  }
  return {
    kind: "decide",
    approve: name === "approve",
    session,
    ids: [...new Set(ids)],
    all,
    input,
    reason: values.reason,
  };
}

/**
 * The files the app keeps besides the database, next to it: the decisions taken one by one
 * (`<name>.decisions.json`), the pretend fleet (`<name>.fleet.json`) and the actions log
 * (`<name>.actions.jsonl`, or the file `APPROVALS_ACTIONS_LOG` names).
 *
 * @param db - The database, an absolute path.
 * @param env - The environment, for `APPROVALS_ACTIONS_LOG`.
 * @returns The paths.
 */
export function appFiles(
  db: string,
  env: Readonly<Record<string, string | undefined>>,
): { readonly drafts: string; readonly fleet: string; readonly actions: string } {
  const stem = db.replace(/\.(sqlite3?|db)$/i, "");
  const actions = env[ACTIONS_LOG_VARIABLE];
  return {
    drafts: `${stem}.decisions.json`,
    fleet: `${stem}.fleet.json`,
    actions: actions !== undefined && actions !== "" ? resolve(actions) : `${stem}.actions.jsonl`,
  };
}

/**
 * The start of a command line that runs this app again on the same database, for the
 * commands the app prints: `npx tsx apps/approvals/src/main.ts` from the repository root
 * (the path is relative to the current folder), with `--db` when it is not the default.
 *
 * @param db - The database, an absolute path.
 * @returns The command line's start.
 */
export function commandPrefix(db: string): string {
  const main = relative(process.cwd(), MAIN) || MAIN;
  const prefix = `npx tsx ${shellQuote(main)}`;
  return db === DEFAULT_DB ? prefix : `${prefix} --db ${shellQuote(db)}`;
}

/**
 * Quotes a word for a POSIX shell, when it needs it.
 *
 * @param word - The word.
 * @returns The word as is when it is safe, else in single quotes.
 */
export function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`;
}
