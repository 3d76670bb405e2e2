import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { connect } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ensurePostgresBinaries, type PostgresServer, startPostgres } from "./index.js";

const packageRoot = fileURLToPath(new URL("..", import.meta.url));
const modulePath = fileURLToPath(new URL("./postgres-server.ts", import.meta.url));

/** Runs one statement with Debian's psql and returns its unaligned output. */
function psql(server: PostgresServer, sql: string): Promise<string> {
  const program = join(ensurePostgresBinaries(), "psql");
  return new Promise((resolve, reject) => {
    execFile(
      program,
      [server.connectionString, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql],
      { encoding: "utf8" },
      (error, stdout, stderr) =>
        error ? reject(new Error(stderr || error.message)) : resolve(stdout.trim()),
    );
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts a server in a child process, which prints `{ port, dir }` and then ends as `how`
 * says: `exit` (process.exit without stop()) or `hang` (waits to be SIGKILLed).
 */
function startInChild(how: "exit" | "hang") {
  const script = `
    const { startPostgres } = await import(${JSON.stringify(modulePath)});
    const server = await startPostgres();
    console.log(JSON.stringify({ port: server.port, dir: server.dir }));
    if (${JSON.stringify(how)} === "exit") process.exit(0);
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    cwd: packageRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const started = new Promise<{ port: number; dir: string }>((resolve, reject) => {
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const line = stdout.split("\n").find((candidate) => candidate.startsWith("{"));
      if (line !== undefined) resolve(JSON.parse(line) as { port: number; dir: string });
    });
    child.on("exit", (code, signal) =>
      reject(new Error(`child exited (${code ?? signal}) before starting: ${stderr}`)),
    );
  });
  const exited = new Promise<void>((resolve) => child.on("exit", () => resolve()));
  return { child, started, exited };
}

describe("startPostgres()", () => {
  it("ensurePostgresBinaries() returns PostgreSQL 15's bin folder, with initdb, pg_ctl and postgres", () => {
    const bin = ensurePostgresBinaries();
    expect(bin).toBe("/usr/lib/postgresql/15/bin");
    for (const program of ["initdb", "pg_ctl", "postgres"]) {
      expect(existsSync(join(bin, program))).toBe(true);
    }
  });

  it("starts PostgreSQL 15 on a free loopback port with a database lattice; stop() stops it, removes its folder and is idempotent", async () => {
    const server = await startPostgres();
    try {
      expect(server.connectionString).toBe(`postgres://lattice@127.0.0.1:${server.port}/lattice`);
      expect(existsSync(join(server.dir, "data", "PG_VERSION"))).toBe(true);
      expect(await psql(server, "SELECT 1")).toBe("1");
      expect(await psql(server, "SHOW server_version")).toMatch(/^15\./);
      expect(await psql(server, "SELECT current_user || ' ' || current_database()")).toBe(
        "lattice lattice",
      );
      expect(await psql(server, "SHOW fsync")).toBe("off");
      expect(await psql(server, "SHOW listen_addresses")).toBe("127.0.0.1");
    } finally {
      await server.stop();
    }
    expect(existsSync(server.dir)).toBe(false);
    expect(await accepts(server.port)).toBe(false);
    await server.stop();
  });

  it("runs two servers at once, each with its own port and folder", async () => {
    const servers = await Promise.all([startPostgres(), startPostgres()]);
    try {
      const [first, second] = servers as [PostgresServer, PostgresServer];
      expect(first.port).not.toBe(second.port);
      expect(first.dir).not.toBe(second.dir);
      await psql(first, "CREATE TABLE only_here (n integer)");
      expect(await psql(second, "SELECT to_regclass('only_here') IS NULL")).toBe("t");
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
  });

  it("no server outlives its process: one that exits without stop() stops its server on exit", async () => {
    const { started, exited } = startInChild("exit");
    const { port, dir } = await started;
    await exited;
    expect(await accepts(port)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });

  it("no server outlives its process: one that is SIGKILLed has its server stopped and folder removed by the watchdog", async () => {
    const { child, started, exited } = startInChild("hang");
    const { port, dir } = await started;
    expect(await accepts(port)).toBe(true);
    child.kill("SIGKILL");
    await exited;
    expect(await eventually(async () => !(await accepts(port)), 10_000)).toBe(true);
    expect(await eventually(async () => !existsSync(dir), 10_000)).toBe(true);
  });
});
