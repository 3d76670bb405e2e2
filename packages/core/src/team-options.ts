import type { ModelProviderV1 } from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { validateMaxDepth } from "./agent-tool.js";
import { DEFAULT_MAX_DEPTH } from "./call-agent.js";
import { type AgentDefinition, isAgentDefinition } from "./define-agent.js";
import { assertMailbox, createInMemoryMailbox, type Mailbox } from "./mailbox.js";
import { createMemberRuntime, type MemberRuntime } from "./member-runtime.js";
import { HandoffError } from "./multi-agent-errors.js";
import type { TeamRunOptions } from "./team.js";
import type { TeamEvent } from "./team-event.js";
import { OUTSIDE_SENDER } from "./team-mail.js";

/**
 * The options of {@link createTeam}. Checked strictly: an unknown key throws with the prefix
 * `createTeam():`.
 */
export interface TeamOptions {
  /** The members, from `defineAgent`; names must be unique (and not `"user"`). */
  readonly members: readonly AgentDefinition[];
  /** Where handed-off tasks and replies wait. Default {@link createInMemoryMailbox}(). */
  readonly mailbox?: Mailbox;
  /** The model of members whose definition names none. */
  readonly model?: string;
  /** The provider of members whose definition sets no `provider`, `apiKey` or `baseURL`. */
  readonly provider?: ModelProviderV1;
  /** The API key of the default Anthropic-compatible provider for such members. Not with `provider`. */
  readonly apiKey?: string;
  /** The base URL of the default Anthropic-compatible provider for such members. Not with `provider`. */
  readonly baseURL?: string;
  /** The deepest chain of agents (calls and handoffs) the team allows. Default {@link DEFAULT_MAX_DEPTH}. */
  readonly maxDepth?: number;
  /**
   * Receives every {@link TeamEvent}, synchronously, in order. It may be `async`; whatever it
   * throws, and a promise it returns that rejects, is ignored (never an unhandled rejection).
   */
  readonly onEvent?: (event: TeamEvent) => void;
}

const TEAM_OPTION_KEYS: ReadonlySet<string> = new Set([
  "members",
  "mailbox",
  "model",
  "provider",
  "apiKey",
  "baseURL",
  "maxDepth",
  "onEvent",
]);

/** The prefix of the errors about {@link TeamOptions} and the team's mailbox. */
export const CREATE_TEAM_PREFIX = "createTeam():";

/** A member of a team, checked: its unique name and its runtime cache. Internal. */
export interface CheckedTeamMember {
  readonly name: string;
  readonly member: MemberRuntime;
}

/** The {@link TeamOptions} that `createTeam` resolves, once checked. Internal. */
export interface CheckedTeamOptions {
  /** The mailbox given, or a new in-memory one. */
  readonly mailbox: Mailbox;
  /** The deepest chain of agents the team allows. */
  readonly maxDepth: number;
  /** The members, in the order given. */
  readonly members: readonly CheckedTeamMember[];
}

/**
 * Checks `createTeam`'s options strictly, in order: an object of known keys, the mailbox,
 * `maxDepth`, the default model and endpoint, `onEvent`, then each member (a definition from
 * `defineAgent`, with a unique name other than `"user"` and a model of its own or the team's).
 *
 * @throws `UnknownOptionError` for an unknown key.
 * @throws `InvalidOptionError` for no members, duplicate names, a member without any model, or a bad value.
 */
export function checkTeamOptions(options: TeamOptions): CheckedTeamOptions {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new InvalidOptionError(
      CREATE_TEAM_PREFIX,
      "options",
      `must be an object { members, ... }, received ${describeValue(options)}.`,
    );
  }
  assertKnownOptions(options, TEAM_OPTION_KEYS, CREATE_TEAM_PREFIX);
  const inner = options.mailbox ?? createInMemoryMailbox();
  assertMailbox(inner, CREATE_TEAM_PREFIX);
  const maxDepth = validateMaxDepth(options.maxDepth, CREATE_TEAM_PREFIX) ?? DEFAULT_MAX_DEPTH;
  validateEndpoint(options);
  if (options.onEvent !== undefined && typeof options.onEvent !== "function") {
    throw new InvalidOptionError(
      CREATE_TEAM_PREFIX,
      "onEvent",
      `must be a function (event) => void, received ${describeValue(options.onEvent)}.`,
    );
  }
  return { mailbox: inner, maxDepth, members: validateMembers(options) };
}

/**
 * Checks the arguments of `team.run()`, in order: its options (strictly), the signal, the
 * member's name, the task.
 *
 * @param members - The team's members, by name.
 * @returns The run's signal, if one was given.
 * @throws {@link HandoffError} (`unknown_member`) for a name that is not a member.
 * @throws `UnknownOptionError` or `InvalidOptionError` for a bad option or an empty task.
 */
export function checkTeamRunArguments(
  member: string,
  task: string,
  runOptions: TeamRunOptions | undefined,
  members: ReadonlyMap<string, unknown>,
): AbortSignal | undefined {
  assertKnownOptions(runOptions, ["signal"], "team.run():");
  const signal = runOptions?.signal;
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidOptionError(
      "team.run():",
      "signal",
      `must be an AbortSignal, received ${describeValue(signal)}.`,
    );
  }
  if (!members.has(member)) {
    throw new HandoffError(
      "unknown_member",
      `team.run(): ${describeValue(member)} is not a member of this team (members: ${[...members.keys()].join(", ")}).`,
    );
  }
  if (typeof task !== "string" || task === "") {
    throw new InvalidOptionError(
      "team.run():",
      "task",
      `must be a non-empty string, received ${describeValue(task)}.`,
    );
  }
  return signal;
}

function validateEndpoint(options: TeamOptions): void {
  for (const key of ["model", "apiKey", "baseURL"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "string") {
      throw new InvalidOptionError(
        CREATE_TEAM_PREFIX,
        key,
        `must be a string, received ${describeValue(options[key])}.`,
      );
    }
  }
  if (options.provider === undefined) return;
  const provider = options.provider as Partial<ModelProviderV1> | null;
  if (
    provider === null ||
    typeof provider !== "object" ||
    typeof provider.stream !== "function" ||
    provider.specificationVersion !== "v1"
  ) {
    throw new InvalidOptionError(
      CREATE_TEAM_PREFIX,
      "provider",
      `must be a v1 model provider such as anthropic({...}) or openaiCompatible({...}), received ${describeValue(options.provider)}.`,
    );
  }
  for (const key of ["apiKey", "baseURL"] as const) {
    if (options[key] !== undefined) {
      throw new InvalidOptionError(
        CREATE_TEAM_PREFIX,
        key,
        `cannot be combined with "provider": pass it to the provider factory instead.`,
      );
    }
  }
}

function validateMembers(options: TeamOptions): CheckedTeamMember[] {
  const members: unknown = options.members;
  if (!Array.isArray(members) || members.length === 0) {
    throw new InvalidOptionError(
      CREATE_TEAM_PREFIX,
      "members",
      `must be a non-empty array of definitions from defineAgent(), received ${describeValue(members)}.`,
    );
  }
  const checked: CheckedTeamMember[] = [];
  const names = new Set<string>();
  members.forEach((definition: unknown, index) => {
    if (!isAgentDefinition(definition)) {
      throw new InvalidOptionError(
        CREATE_TEAM_PREFIX,
        `members[${index}]`,
        `is not an agent definition (received ${describeValue(definition)}). Make members with defineAgent({ name, ... }).`,
      );
    }
    const name = definition.name;
    if (names.has(name) || name === OUTSIDE_SENDER) {
      throw new InvalidOptionError(
        CREATE_TEAM_PREFIX,
        "members",
        name === OUTSIDE_SENDER
          ? `holds a member named "user", a name the team keeps for tasks from outside. Rename it.`
          : `holds two members named "${name}". Member names must be unique; rename one of them.`,
      );
    }
    if (
      (definition.model === undefined || definition.model === "") &&
      options.model === undefined
    ) {
      throw new InvalidOptionError(
        CREATE_TEAM_PREFIX,
        `members[${index}]`,
        `("${name}") names no model: set model on its definition, or a default with createTeam({ model }).`,
      );
    }
    names.add(name);
    checked.push({ name, member: createMemberRuntime(definition) });
  });
  return checked;
}
