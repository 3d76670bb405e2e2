import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAgent, memorySessionStore } from "@lattice/core";
import { createScriptedModelServer, type ScriptedTurn } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterAll, expect, it } from "vitest";
import { z } from "zod/v4";
import { sqliteSessionStore } from "./index.js";

const folder = mkdtempSync(join(tmpdir(), "lattice-crash-resume-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const packageRoot = fileURLToPath(new URL("..", import.meta.url));

const script: ScriptedTurn[] = [
  {
    content: [1, 2, 3, 4].map((step) => ({
      type: "tool_use" as const,
      id: `call_${step}`,
      name: "work",
      input: { step },
    })),
    usage: { inputTokens: 120, outputTokens: 40 },
  },
  {
    content: [{ type: "text", text: "All four steps are done." }],
    usage: { inputTokens: 300, outputTokens: 9 },
  },
];

function recordingWork(record: string) {
  return tool("work", "Does one step of work", z.object({ step: z.number() }), async ({ step }) => {
    appendFileSync(record, `start ${step}\n`);
    appendFileSync(record, `done ${step}\n`);
    return { content: `step ${step} done` };
  });
}

it("R18, R19: a process SIGKILLed while its batch is half done; resume in another process runs only the calls without a logged result, and the messages equal an uninterrupted run's", async () => {
  const server = await createScriptedModelServer();
  try {
    // The uninterrupted run on the same script, for comparison.
    server.enqueue(...script);
    const reference = await createAgent({
      model: "scripted",
      apiKey: "sk-crash-test",
      baseURL: server.anthropicBaseURL,
      tools: [recordingWork(join(folder, "reference.log"))],
      toolConcurrency: { mode: "sequential" },
      sessionStore: memorySessionStore(),
    }).run("Do the four steps", { sessionId: "crash" });
    expect(reference.subtype).toBe("success");

    const path = join(folder, "sessions.db");
    const record = join(folder, "record.log");
    writeFileSync(record, "");
    server.enqueue(...script);
    const child = spawn(
      process.execPath,
      [
        "--conditions=@lattice/source",
        "--import",
        "tsx",
        "src/fixtures/crash-child.ts",
        path,
        server.anthropicBaseURL,
        record,
      ],
      { cwd: packageRoot, stdio: ["ignore", "ignore", "pipe"] },
    );
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.on("exit", (code, signal) => resolve(signal ?? code)),
    );
    for (let tries = 0; !readFileSync(record, "utf8").includes("start 3"); tries++) {
      if (tries > 3000 || child.exitCode !== null)
        throw new Error(`the child never reached step 3: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    child.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
    expect(readFileSync(record, "utf8")).toBe("start 1\ndone 1\nstart 2\ndone 2\nstart 3\n");

    // Another process (this one) opens the same file and resumes the run.
    const store = sqliteSessionStore({ path });
    try {
      const agent = createAgent({
        model: "scripted",
        apiKey: "sk-crash-test",
        baseURL: server.anthropicBaseURL,
        tools: [recordingWork(record)],
        toolConcurrency: { mode: "sequential" },
        sessionStore: store,
      });
      await expect(agent.run("Something else", { sessionId: "crash" })).rejects.toMatchObject({
        code: "session_conflict",
      });
      const result = await agent.resume("crash").finalResult();
      expect(result).toMatchObject({
        subtype: "success",
        result: "All four steps are done.",
        numTurns: 2,
      });
      // Steps 1 and 2 had logged results: never run again. Step 3 (cut) and 4 ran once more.
      expect(readFileSync(record, "utf8")).toBe(
        "start 1\ndone 1\nstart 2\ndone 2\nstart 3\nstart 3\ndone 3\nstart 4\ndone 4\n",
      );
      expect(result.messages).toEqual(reference.messages);
      expect(result.usage).toEqual(reference.usage);
      const types = (await store.load("crash")).entries.map((entry) => entry.type);
      expect(types).toEqual([
        "run_started",
        "reply",
        "tool_result",
        "tool_result",
        "run_resumed",
        "tool_result",
        "tool_result",
        "reply",
        "run_finished",
      ]);
    } finally {
      await store.close?.();
    }
  } finally {
    await server.close();
  }
}, 30_000);
