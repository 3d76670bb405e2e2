import { type AnyToolDefinition, type ToolContext, tool } from "agent-lattice";
import { z } from "zod/v4";
import {
  type Deployment,
  deploymentKey,
  describeDeployment,
  ENVIRONMENTS,
  readFleet,
  recordAction,
  SERVICES,
  writeDeployment,
} from "./fleet.js";

/** Where the ops tools keep their pretend world, and how slow it is. */
export interface OpsToolsOptions {
  /** The pretend fleet's JSON file. */
  readonly fleetPath: string;
  /** The actions log: one JSON line per deploy and rollback started and finished. */
  readonly actionsPath: string;
  /** How long a deploy or rollback takes, in milliseconds (it waits, then changes the fleet). */
  readonly workMs: number;
}

const service = z.enum(SERVICES).describe("The service");
const environment = z.enum(ENVIRONMENTS).describe("The environment");
const version = z
  .string()
  .regex(/^v\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?$/, "a version looks like v1.5.0 or v1.5.0-rc1")
  .describe("A version, for example v1.5.0");

/** A deploy or rollback may take this long before it is cut with a timeout result. */
const CHANGE_TIMEOUT_MS = 60_000;

/**
 * The ops agent's tools:
 *
 * - `check_status` reads how a service is doing; it changes nothing and never needs approval;
 * - `deploy` puts a version of a service in an environment; a deploy to `production` needs a
 *   person's approval (`needsApproval` as a function of the input), one to `staging` does not.
 *   A version whose name contains `broken` fails its health check: the demo's way to see a
 *   rollback proposed;
 * - `rollback` puts a service back on an earlier version; it always needs approval.
 *
 * Deploys and rollbacks write a `"started"` line to the actions log before they change the
 * fleet and a `"finished"` line after, so the log shows every time one really ran.
 *
 * @param options - {@link OpsToolsOptions}.
 * @returns The tools, to pass as `createAgent({ tools })`.
 */
export function opsTools(options: OpsToolsOptions): AnyToolDefinition[] {
  const { fleetPath, actionsPath, workMs } = options;

  /** Records the start, waits `workMs`, applies `change`, records the end. */
  const change = async (
    input: unknown,
    ctx: ToolContext,
    apply: () => { readonly content: string; readonly isError?: boolean },
  ) => {
    const base = {
      pid: process.pid,
      tool: ctx.toolName,
      sessionId: ctx.run?.sessionId,
      toolUseId: ctx.toolUseId,
      input,
    };
    recordAction(actionsPath, { time: new Date().toISOString(), event: "started", ...base });
    await sleep(workMs, ctx.signal);
    const result = apply();
    recordAction(actionsPath, {
      time: new Date().toISOString(),
      event: "finished",
      ...base,
      outcome: result.content,
    });
    return result;
  };

  const checkStatus = tool(
    "check_status",
    "Read which version of a service runs, and whether it is healthy. Changes nothing. Leave out environment for both.",
    z.object({ service, environment: environment.optional() }),
    async (input) => {
      const fleet = readFleet(fleetPath);
      const environments = input.environment === undefined ? ENVIRONMENTS : [input.environment];
      const lines = environments.map((env) => {
        const key = deploymentKey(input.service, env);
        return describeDeployment(key, fleet[key]!);
      });
      return { content: lines.join("\n") };
    },
    { isConcurrencySafe: () => true },
  );

  const deploy = tool(
    "deploy",
    "Deploy a version of a service to an environment, then run its health check. A deploy to production waits for a person's approval.",
    z.object({ service, environment, version }),
    (input, ctx) =>
      change(input, ctx, () => {
        const key = deploymentKey(input.service, input.environment);
        const before = readFleet(fleetPath)[key]!;
        const healthy = !input.version.includes("broken");
        const after: Deployment = {
          version: input.version,
          previous: before.version,
          instances: before.instances,
          ready: healthy ? before.instances : Math.max(0, before.instances - 3),
        };
        writeDeployment(fleetPath, key, after);
        if (healthy) {
          return {
            content: `Deployed ${input.service} ${input.version} to ${input.environment} (was ${before.version}). Health check passed: ${after.ready}/${after.instances} instances ready.`,
          };
        }
        return {
          isError: true,
          content: `Deployed ${input.service} ${input.version} to ${input.environment}, but the health check failed: ${after.ready}/${after.instances} instances ready. ${key} now runs ${input.version}; the previous version was ${before.version}.`,
        };
      }),
    {
      needsApproval: (input) => input.environment === "production",
      timeoutMs: CHANGE_TIMEOUT_MS,
    },
  );

  const rollback = tool(
    "rollback",
    "Put a service in an environment back on an earlier version. Always waits for a person's approval.",
    z.object({ service, environment, to_version: version }),
    (input, ctx) =>
      change(input, ctx, () => {
        const key = deploymentKey(input.service, input.environment);
        const before = readFleet(fleetPath)[key]!;
        writeDeployment(fleetPath, key, {
          version: input.to_version,
          previous: before.version,
          instances: before.instances,
          ready: before.instances,
        });
        return {
          content: `Rolled ${input.service} in ${input.environment} back to ${input.to_version} (was ${before.version}). Health check passed: ${before.instances}/${before.instances} instances ready.`,
        };
      }),
    { needsApproval: true, timeoutMs: CHANGE_TIMEOUT_MS },
  );

  return [checkStatus, deploy, rollback];
}

/** Waits `ms` milliseconds; rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Checks an input a person wrote for a call (`approve --input`) against its tool's schema,
 * before anything is recorded: the agent would check it too, but only when the run resumes,
 * and then answer the call with an error instead of running it.
 *
 * @param tools - The agent's tools, from {@link opsTools}.
 * @param toolName - The tool of the call.
 * @param input - The input to run the call with.
 * @returns What is wrong with the input, one problem a line, or `undefined` when it is valid.
 */
export async function checkToolInput(
  tools: readonly AnyToolDefinition[],
  toolName: string,
  input: unknown,
): Promise<string | undefined> {
  const definition = tools.find((candidate) => candidate.name === toolName);
  if (definition === undefined) return `this app has no tool "${toolName}".`;
  const checked = await definition.schema["~standard"].validate(input);
  if (checked.issues === undefined) return undefined;
  return checked.issues
    .map((issue) => {
      const path = (issue.path ?? [])
        .map((part) => String(typeof part === "object" ? part.key : part))
        .join(".");
      return `${path === "" ? "input" : path}: ${issue.message}`;
    })
    .join("\n");
}
