import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { dirname } from "node:path";

/** The services of the pretend fleet. */
export const SERVICES = ["web", "api", "worker"] as const;

/** The environments every service runs in. */
export const ENVIRONMENTS = ["staging", "production"] as const;

/** A service of the pretend fleet. */
export type Service = (typeof SERVICES)[number];

/** An environment of the pretend fleet. */
export type Environment = (typeof ENVIRONMENTS)[number];

/** What runs of one service in one environment. */
export interface Deployment {
  /** The version running. */
  readonly version: string;
  /** The version that ran before the last deploy or rollback, if any. */
  readonly previous?: string;
  /** How many instances there are. */
  readonly instances: number;
  /** How many of them pass their health check. */
  readonly ready: number;
}

/** The whole fleet, by `"<service>/<environment>"`. */
export type FleetState = Readonly<Record<string, Deployment>>;

/** One side effect a tool carried out, as a line of the actions log. */
export interface ActionRecord {
  /** When it happened (ISO 8601). */
  readonly time: string;
  /** The process that did it. */
  readonly pid: number;
  /** The tool. */
  readonly tool: string;
  /** `"started"` before the change, `"finished"` once it is done. */
  readonly event: "started" | "finished";
  /** The session and tool call it belongs to. */
  readonly sessionId: string | undefined;
  readonly toolUseId: string;
  /** The tool's input. */
  readonly input: unknown;
  /** What came of it, on `"finished"` lines. */
  readonly outcome?: string;
}

const INITIAL: FleetState = {
  "web/staging": { version: "v1.5.0", previous: "v1.4.2", instances: 2, ready: 2 },
  "web/production": { version: "v1.4.2", previous: "v1.4.1", instances: 4, ready: 4 },
  "api/staging": { version: "v2.1.0", previous: "v2.0.1", instances: 2, ready: 2 },
  "api/production": { version: "v2.0.1", previous: "v2.0.0", instances: 3, ready: 3 },
  "worker/staging": { version: "v0.9.3", instances: 1, ready: 1 },
  "worker/production": { version: "v0.9.3", previous: "v0.9.2", instances: 2, ready: 2 },
};

/**
 * The key of a deployment in {@link FleetState}.
 *
 * @param service - The service.
 * @param environment - The environment.
 * @returns `"<service>/<environment>"`, for example `"web/production"`.
 */
export function deploymentKey(service: Service, environment: Environment): string {
  return `${service}/${environment}`;
}

/**
 * Reads the pretend fleet from its JSON file; a missing file is the initial fleet (web on
 * v1.4.2 in production, and so on).
 *
 * @param path - The fleet's JSON file.
 * @returns The fleet's state.
 */
export function readFleet(path: string): FleetState {
  if (!existsSync(path)) return INITIAL;
  return { ...INITIAL, ...(JSON.parse(readFileSync(path, "utf8")) as FleetState) };
}

/**
 * Replaces one deployment of the pretend fleet and writes the file (a new file renamed over
 * the old one, so a reader never sees half of it).
 *
 * @param path - The fleet's JSON file; its folder is created if missing.
 * @param key - The deployment, from {@link deploymentKey}.
 * @param deployment - What runs there now.
 */
export function writeDeployment(path: string, key: string, deployment: Deployment): void {
  const next = { ...readFleet(path), [key]: deployment };
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(next, null, 2)}\n`);
  renameSync(temporary, path);
}

/**
 * Appends one line to the actions log: the record of every side effect the tools carried out,
 * kept apart from the session so that it shows what really ran, however often.
 *
 * @param path - The actions log (JSON lines); its folder is created if missing.
 * @param record - What happened.
 */
export function recordAction(path: string, record: ActionRecord): void {
  mkdirSync(dirname(path), { recursive: true });
  appendFileSync(path, `${JSON.stringify(record)}\n`);
}

/**
 * One line that says how a deployment is doing, as `check_status` reports it and the offline
 * model reads it back: `web/production: v1.4.2 (previous v1.4.1), healthy, 4/4 instances ready`.
 *
 * @param key - The deployment, from {@link deploymentKey}.
 * @param deployment - Its state.
 * @returns The line.
 */
export function describeDeployment(key: string, deployment: Deployment): string {
  const previous = deployment.previous === undefined ? "" : ` (previous ${deployment.previous})`;
  const health = deployment.ready === deployment.instances ? "healthy" : "UNHEALTHY";
  return `${key}: ${deployment.version}${previous}, ${health}, ${deployment.ready}/${deployment.instances} instances ready`;
}
