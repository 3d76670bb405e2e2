// Packs every public package with `pnpm pack` (as a release would) and installs the tarballs
// into a fresh temporary project with npm, as a user would, then checks that
// `import { createAgent, tool } from "agent-lattice"` and `from "@lattice/tools"` work at run
// time and type-check, runs an agent offline against the scripted model server, and runs the
// session store conformance suite against the packed @lattice/store-sqlite.
// Installing @lattice/store-sqlite builds better-sqlite3 (a native module) from source when no
// prebuilt binary can be downloaded, as here: that needs Python, make and a C++ compiler and
// adds about a minute, but works offline (only the npm registry is needed).
// Each tarball is linted first (lint-tarball.mjs: publint, attw, the packed exports).
// Needs `pnpm build` first. Exits non-zero on any failure.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { lintTarball } from "./lint-tarball.mjs";

const root = resolve(import.meta.dirname, "..");
const packages = [
  "tools",
  "scheduler",
  "providers",
  "core",
  "agent-lattice",
  "store-sqlite",
  "ai-sdk",
  "mcp",
  "otel",
  "trace-viewer",
  "store-postgres",
  "store-redis",
  "bullmq",
  "web",
];
const work = mkdtempSync(join(tmpdir(), "lattice-pack-"));
const run = (command, args, cwd) =>
  execFileSync(command, args, { cwd, stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" });
// Under `pnpm run`, npm_execpath is pnpm's own script: use it, so no global pnpm is needed.
// biome-ignore lint/suspicious/noUndeclaredEnvVars: set by the package manager, not a turbo task input.
const execPath = process.env.npm_execpath ?? "";
const pnpm = (args, cwd) =>
  /pnpm/.test(execPath) && /\.c?js$/.test(execPath)
    ? run(process.execPath, [execPath, ...args], cwd)
    : run("pnpm", args, cwd);

try {
  const tarballs = {};
  const problems = [];
  for (const name of packages) {
    const dir = join(root, "packages", name);
    const before = new Set(readdirSync(work));
    pnpm(["pack", "--pack-destination", work], dir);
    const file = readdirSync(work).find((entry) => !before.has(entry) && entry.endsWith(".tgz"));
    const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    tarballs[manifest.name] = `file:${join(work, file)}`;
    problems.push(...(await lintTarball(join(work, file), manifest)));
  }
  if (problems.length > 0) {
    throw new Error(`pack check: the packed packages have problems:\n${problems.join("\n")}`);
  }
  console.log(
    `pack check: ${packages.length} tarballs clean under publint (strict) and attw (esm-only)`,
  );
  const project = join(work, "project");
  mkdirSync(project);
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify(
      {
        name: "lattice-pack-check",
        private: true,
        type: "module",
        dependencies: {
          "agent-lattice": tarballs["agent-lattice"],
          "@lattice/tools": tarballs["@lattice/tools"],
          "@lattice/store-sqlite": tarballs["@lattice/store-sqlite"],
          "@lattice/providers": tarballs["@lattice/providers"],
          "@lattice/ai-sdk": tarballs["@lattice/ai-sdk"],
          "@lattice/mcp": tarballs["@lattice/mcp"],
          "@lattice/otel": tarballs["@lattice/otel"],
          "@lattice/trace-viewer": tarballs["@lattice/trace-viewer"],
          "@lattice/store-postgres": tarballs["@lattice/store-postgres"],
          "@lattice/store-redis": tarballs["@lattice/store-redis"],
          "@lattice/bullmq": tarballs["@lattice/bullmq"],
          "@lattice/web": tarballs["@lattice/web"],
          // @lattice/web's types name the AI SDK's UIMessage: a project that uses useChat has it.
          ai: "6.0.325",
          "@opentelemetry/api": "1.9.1",
          // The MCP SDK's types use Node's Buffer: a project with @lattice/mcp has @types/node.
          "@types/node": "20.19.43",
          zod: "4.6.7",
        },
        overrides: Object.fromEntries(
          Object.entries(tarballs).filter(([name]) => name.startsWith("@lattice/")),
        ),
      },
      null,
      2,
    ),
  );
  run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error"], project);

  writeFileSync(
    join(project, "check.ts"),
    `import { createAgent, ProviderError, tool, type SDKResultMessage } from "agent-lattice";
import { createHttpTransport, ProviderError as HttpProviderError, type ModelResponseCodec } from "@lattice/providers/http";
import { builtinTools } from "agent-lattice/builtin";
import { createScriptedModelServer, sessionStoreConformance } from "agent-lattice/testing";
import { tool as toolFromTools } from "@lattice/tools";
import { sqliteSessionStore } from "@lattice/store-sqlite";
import { fromAiSdk } from "@lattice/ai-sdk";
import { z } from "zod/v4";

if (tool !== toolFromTools) throw new Error("agent-lattice and @lattice/tools export different tool()");
const finish = tool("finish", "Submit the answer", z.object({ answer: z.string() }), async ({ answer }) => ({
  content: answer,
  endTurn: true,
  structuredResult: { answer },
}));
const server = await createScriptedModelServer({
  turns: [{ content: [{ type: "tool_use", name: "finish", input: { answer: "42" } }] }],
});
const agent = createAgent({ apiKey: "offline", baseURL: server.anthropicBaseURL, model: "scripted", tools: [finish] });
const result: SDKResultMessage = await agent.run("What is 6 * 7?");
if (HttpProviderError !== ProviderError) throw new Error("@lattice/providers/http and agent-lattice export different ProviderError classes");
const unused = (): never => { throw new Error("no response body expected"); };
const codec: ModelResponseCodec = { createStreamDecoder: unused, decodeMessage: unused };
const transport = createHttpTransport({ label: "Scripted API", url: server.anthropicBaseURL + "/v1/messages", headers: { "x-api-key": "offline" } });
let httpError: unknown;
try { for await (const _ of transport.call({ body: {}, codec })) { /* none */ } } catch (error) { httpError = error; }
if (!(httpError instanceof ProviderError) || httpError.code !== "provider_invalid_request") throw new Error("@lattice/providers/http: unexpected " + String(httpError));
await server.close();
if (result.result !== "42") throw new Error("unexpected result " + JSON.stringify(result));
if (builtinTools({ tools: ["Read"], cwd: "." }).length !== 1) throw new Error("builtinTools failed");
let refused = "";
try { fromAiSdk("gpt-4o" as never); } catch (error) { refused = String(error); }
if (!refused.includes("fromAiSdk")) throw new Error("@lattice/ai-sdk: a model id string was not refused: " + refused);
const checks = sessionStoreConformance(() => sqliteSessionStore({ path: ":memory:" }));
for (const check of checks) await check.run();
console.log("pack check: ok (" + result.result + ", " + checks.length + " session store checks)");
`,
  );
  writeFileSync(
    join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: [],
        lib: ["ES2022", "DOM"],
      },
      files: ["check.ts"],
    }),
  );
  run(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "."],
    project,
  );
  run(
    process.execPath,
    [
      join(root, "node_modules", "typescript", "bin", "tsc"),
      "-p",
      ".",
      "--outDir",
      "out",
      "--noEmit",
      "false",
    ],
    project,
  );
  process.stdout.write(run(process.execPath, ["out/check.js"], project));

  // @lattice/mcp, @lattice/otel, @lattice/trace-viewer, the server stores and @lattice/bullmq
  // are Node-only (the MCP SDK's, pg's and ioredis's types use Node's): their project has
  // @types/node, which the check above does without.
  mkdirSync(join(project, "mcp"));
  writeFileSync(
    join(project, "mcp", "check-mcp.ts"),
    `import { mcpServer, serveMcp } from "@lattice/mcp";
import { otelObserver } from "@lattice/otel";
import { renderTimeline } from "@lattice/trace-viewer";
import { postgresSessionStore } from "@lattice/store-postgres";
import { redisSessionStore } from "@lattice/store-redis";
import { createRunQueue, RunQueueError } from "@lattice/bullmq";
import { LatticeError, tool } from "agent-lattice";
import { z } from "zod/v4";

const source = mcpServer({ name: "fs", command: "node", args: ["server.js"] });
if (source.kind !== "tool_source") throw new Error("@lattice/mcp: mcpServer() is not a tool source");
const echo = tool("echo", "Echo", z.object({ text: z.string() }), async ({ text }) => ({ content: text }));
const served = await serveMcp({ name: "pack-check", version: "1.0.0", tools: [echo] }, { transport: "http", port: 0 });
await served.close();
if (typeof otelObserver().onTrace !== "function") throw new Error("@lattice/otel: no onTrace");
if (!renderTimeline([]).toLowerCase().startsWith("<!doctype html>")) throw new Error("@lattice/trace-viewer: no HTML");
// The server packages load and report an unreachable server clearly, without a server.
const queue = createRunQueue({ connection: "redis://127.0.0.1:1", connectTimeoutMs: 200 });
let queueError: unknown;
try { await queue.enqueue("agent", "hi"); } catch (error) { queueError = error; }
await queue.close();
if (!(queueError instanceof RunQueueError) || !(queueError instanceof LatticeError) || queueError.code !== "redis_unreachable") throw new Error("@lattice/bullmq: unexpected " + String(queueError));
const pgStore = postgresSessionStore({ connectionString: "postgres://nobody@127.0.0.1:1/none?connect_timeout=1" });
let pgError: unknown;
try { await pgStore.load("s"); } catch (error) { pgError = error; }
await pgStore.close();
if (!(pgError instanceof LatticeError)) throw new Error("@lattice/store-postgres: unexpected " + String(pgError));
const redisStore = redisSessionStore({ url: "redis://127.0.0.1:1", timeoutMs: 500 });
let redisError: unknown;
try { await redisStore.load("s"); } catch (error) { redisError = error; }
await redisStore.close();
if (!(redisError instanceof LatticeError)) throw new Error("@lattice/store-redis: unexpected " + String(redisError));
console.log("pack check: @lattice/mcp, @lattice/otel, @lattice/trace-viewer, @lattice/store-postgres, @lattice/store-redis, @lattice/bullmq ok");
`,
  );
  writeFileSync(
    join(project, "mcp", "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        skipLibCheck: false,
        types: ["node"],
        lib: ["ES2022"],
        outDir: "out",
      },
      files: ["check-mcp.ts"],
    }),
  );
  run(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "."],
    join(project, "mcp"),
  );
  process.stdout.write(run(process.execPath, ["out/check-mcp.js"], join(project, "mcp")));

  // @lattice/web as a web app's server uses it: its types name the ai package's UIMessage,
  // whose types want the DOM's and Node's (a Next.js project has both).
  mkdirSync(join(project, "web"));
  writeFileSync(
    join(project, "web", "check-web.ts"),
    `import { toUIMessageStreamResponse, type LatticeUIMessage } from "@lattice/web";
import { createAgent } from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";

const model = await createScriptedModelServer({ turns: [{ content: [{ type: "text", text: "Hello, page." }] }] });
const page = await toUIMessageStreamResponse(createAgent({ apiKey: "offline", baseURL: model.anthropicBaseURL, model: "scripted" }).query("Hi")).text();
await model.close();
if (!page.includes('"type":"text-delta"') || !page.endsWith("data: [DONE]\\n\\n")) throw new Error("@lattice/web: unexpected stream " + page);
const typed: LatticeUIMessage = { id: "m", role: "user", parts: [{ type: "text", text: "hi" }] };
void typed;
console.log("pack check: @lattice/web ok");
`,
  );
  writeFileSync(
    join(project, "web", "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        skipLibCheck: false,
        types: ["node"],
        lib: ["ES2022", "DOM"],
        outDir: "out",
      },
      files: ["check-web.ts"],
    }),
  );
  run(
    process.execPath,
    [join(root, "node_modules", "typescript", "bin", "tsc"), "-p", "."],
    join(project, "web"),
  );
  process.stdout.write(run(process.execPath, ["out/check-web.js"], join(project, "web")));
} finally {
  rmSync(work, { recursive: true, force: true });
}
