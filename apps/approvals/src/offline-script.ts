import { randomBytes } from "node:crypto";
import type { RecordedRequest, ScriptedBlock, ScriptedTurn } from "agent-lattice/testing";

/** A content block as it travels in an Anthropic Messages request. */
interface WireBlock {
  readonly type: string;
  readonly text?: string;
  readonly id?: string;
  readonly name?: string;
  readonly input?: unknown;
  readonly tool_use_id?: string;
  readonly content?: string | readonly WireBlock[];
  readonly is_error?: boolean;
}

/** A message as it travels in an Anthropic Messages request. */
interface WireMessage {
  readonly role: "user" | "assistant";
  readonly content: string | readonly WireBlock[];
}

/** The inputs of the ops tools, as the offline model writes them. */
interface Target {
  readonly service: string;
  readonly environment: string;
  readonly version?: string;
  readonly to_version?: string;
}

/** A line of `check_status`, read back. */
interface Status {
  readonly version: string;
  readonly previous: string | undefined;
}

const SERVICE = "(web|api|worker)";
const VERSION = "(v\\d+\\.\\d+\\.\\d+(?:-[0-9A-Za-z.]+)?)";
const STATUS_LINE = /^(\w+\/\w+): (\S+)(?: \(previous (\S+)\))?,/gm;

const HELP =
  'I\'m the offline ops model. Try "deploy web v1.5.0 to production", "deploy web v1.6.0-broken to production" ' +
  '(it fails its health check), "deploy web v1.5.0 and api v2.1.0 to production", "deploy web v1.5.0 to staging" ' +
  '(no approval needed), "roll back api in production" or "status of web".';

/**
 * What the offline "model" answers. Each process of the app starts its own scripted model
 * server, so this reads only the request, as a real model would, and keeps no state: the
 * process that resumes a run after an approval gets the same answers as the one that started
 * it.
 *
 * - "deploy web v1.5.0 to production" (one or more service and version pairs; "staging"
 *   anywhere picks staging): `check_status` and `deploy` in one reply, one batch;
 * - "roll back web": `check_status`, then `rollback` to the previous version it reports;
 * - "status …": `check_status`;
 * - after tool results: a sentence on each. A denied call is reported with the reason the
 *   person gave, which reached the model in the call's `is_error` result. A deploy that failed
 *   its health check brings a `rollback` to the previous version (which needs approval again).
 *
 * @param request - The request the scripted model server received.
 * @returns The reply.
 */
export function offlineTurn(request: RecordedRequest): ScriptedTurn {
  const messages = (request.body as { messages: readonly WireMessage[] }).messages;
  const last = messages.at(-1);
  const content =
    last !== undefined && isToolResults(last) ? afterTools(messages) : answer(messages);
  return { content };
}

function answer(messages: readonly WireMessage[]): ScriptedBlock[] {
  const prompt = textOf(messages.at(-1)?.content ?? "");
  const environment = environmentOf(prompt);
  const deploys = [...prompt.matchAll(new RegExp(`\\b${SERVICE}\\s+(?:to\\s+)?${VERSION}`, "gi"))];
  const services = mentionedServices(prompt);
  if (isRollbackRequest(prompt)) {
    if (services.length === 0) {
      return [{ type: "text", text: "Which service should I roll back: web, api or worker?" }];
    }
    return [
      { type: "text", text: `Let me see what runs now before I propose a rollback.` },
      ...services.map((service) => toolUse("check_status", { service, environment })),
    ];
  }
  if (deploys.length > 0) {
    const targets = deploys.map(([, service, version]) => ({
      service: service!.toLowerCase(),
      environment,
      version: version!,
    }));
    const names = targets.map((target) => `${target.service} ${target.version}`).join(" and ");
    const checked = [...new Set(targets.map((target) => target.service))];
    return [
      {
        type: "text",
        text: `I'll check what runs in ${environment} and deploy ${names} there.`,
      },
      ...checked.map((service) => toolUse("check_status", { service, environment })),
      ...targets.map((target) => toolUse("deploy", { ...target })),
    ];
  }
  if (/\b(status|health|check|running|runs)\b/i.test(prompt)) {
    const asked = services.length > 0 ? services : ["web", "api", "worker"];
    return [
      { type: "text", text: "Here is what runs." },
      ...asked.map((service) => toolUse("check_status", { service })),
    ];
  }
  return [{ type: "text", text: HELP }];
}

function afterTools(messages: readonly WireMessage[]): ScriptedBlock[] {
  const results = blocksOf(messages.at(-1)?.content).filter((b) => b.type === "tool_result");
  const calls = blocksOf(messages.at(-2)?.content).filter((b) => b.type === "tool_use");
  const statuses = new Map<string, Status>();
  const sentences: string[] = [];
  const next: ScriptedBlock[] = [];
  let changes = 0;

  for (const result of results) {
    const call = calls.find((candidate) => candidate.id === result.tool_use_id);
    const text = textOf(result.content ?? "");
    if (call?.name === "check_status") {
      for (const [, key, version, previous] of text.matchAll(STATUS_LINE)) {
        statuses.set(key!, { version: version!, previous });
      }
    }
  }

  for (const result of results) {
    const call = calls.find((candidate) => candidate.id === result.tool_use_id);
    const text = textOf(result.content ?? "");
    const input = (call?.input ?? {}) as Target;
    const key = `${input.service}/${input.environment}`;
    const denied = result.is_error === true ? denialOf(text) : undefined;
    if (call?.name === "deploy") {
      changes++;
      const what = `${input.service} ${input.version} to ${input.environment}`;
      if (result.is_error !== true) {
        // The result says what ran: a person may have approved the call with another input.
        const done = /^Deployed (\S+ \S+ to \S+) \(/.exec(text)?.[1] ?? what;
        sentences.push(`Deployed ${done}: the health check passed.`);
      } else if (denied !== undefined) {
        const now = statuses.get(key)?.version;
        sentences.push(
          `I did not deploy ${what}: the deploy was denied (${denied}).` +
            (now === undefined ? "" : ` ${key} stays on ${now}.`),
        );
      } else {
        const previous = /previous version was (\S+?)\.?$/.exec(text)?.[1];
        if (previous === undefined) {
          sentences.push(`The deploy of ${what} failed: ${text}`);
        } else {
          sentences.push(
            `The deploy of ${what} failed its health check. I propose rolling ${key} back to ${previous}.`,
          );
          next.push(
            toolUse("rollback", {
              service: input.service,
              environment: input.environment,
              to_version: previous,
            }),
          );
        }
      }
    } else if (call?.name === "rollback") {
      changes++;
      if (result.is_error !== true) {
        const version = /\bback to (\S+) \(/.exec(text)?.[1] ?? input.to_version;
        sentences.push(`${key} is back on ${version} and healthy.`);
      } else if (denied !== undefined) {
        sentences.push(
          `I did not roll ${key} back to ${input.to_version}: the rollback was denied (${denied}). ${key} stays as it is; someone should look at it.`,
        );
      } else {
        sentences.push(`The rollback of ${key} failed: ${text}`);
      }
    } else if (call?.name !== "check_status") {
      sentences.push(`${call?.name ?? "A tool"} says: ${text}`);
    }
  }

  if (changes === 0) {
    // Only status checks: a report, or the rollback the user asked for.
    if (isRollbackRequest(lastPrompt(messages))) {
      for (const [key, status] of statuses) {
        const [service, environment] = key.split("/");
        if (status.previous === undefined) {
          sentences.push(
            `${key} runs ${status.version}; there is no earlier version to go back to.`,
          );
          continue;
        }
        sentences.push(
          `${key} runs ${status.version}. I propose rolling it back to ${status.previous}.`,
        );
        next.push(toolUse("rollback", { service, environment, to_version: status.previous }));
      }
    } else {
      for (const [key, status] of statuses) {
        sentences.push(`${key} runs ${status.version}.`);
      }
      const unhealthy = results.some((result) =>
        textOf(result.content ?? "").includes("UNHEALTHY"),
      );
      if (unhealthy) sentences.push("Something is unhealthy: ask me to roll it back.");
    }
  }
  const text = sentences.join(" ") || "Done.";
  return [{ type: "text", text }, ...next];
}

/** A `tool_use` block with an id unique across processes (each starts its own server). */
function toolUse(name: string, input: object): ScriptedBlock {
  return { type: "tool_use", id: `toolu_offline_${randomBytes(9).toString("hex")}`, name, input };
}

/**
 * The reason of a denied call, quoted, from the `is_error` result the agent sent for it; the
 * agent words it as "Tool call "deploy" (…) was denied by the person asked to approve it:
 * <reason>". `undefined` when the result is not a denial.
 */
function denialOf(text: string): string | undefined {
  if (!/\bdenied\b/i.test(text)) return undefined;
  const reason = /\bdenied\b[^:]*:\s*([\s\S]+)$/i.exec(text)?.[1]?.trim();
  return reason === undefined || reason === "" ? "no reason given" : `reason: "${reason}"`;
}

function isRollbackRequest(prompt: string): boolean {
  return /\broll\s*back\b|\brollback\b|\brevert\b/i.test(prompt);
}

function environmentOf(prompt: string): string {
  return /\bstaging\b/i.test(prompt) ? "staging" : "production";
}

function mentionedServices(prompt: string): string[] {
  const found = [...prompt.matchAll(new RegExp(`\\b${SERVICE}\\b`, "gi"))];
  return [...new Set(found.map(([, service]) => service!.toLowerCase()))];
}

/** The latest prompt of the conversation: the last user message that is not tool results. */
function lastPrompt(messages: readonly WireMessage[]): string {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role === "user" && !isToolResults(message)) return textOf(message.content);
  }
  return "";
}

function isToolResults(message: WireMessage): boolean {
  return message.role === "user" && blocksOf(message.content).some((b) => b.type === "tool_result");
}

function blocksOf(content: WireMessage["content"] | undefined): readonly WireBlock[] {
  return Array.isArray(content) ? content : [];
}

function textOf(content: string | readonly WireBlock[]): string {
  if (typeof content === "string") return content;
  return content
    .filter((block) => block.type === "text")
    .map((block) => block.text ?? "")
    .join("");
}
