import { link, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createAgent,
  PARALLEL_TOOL_CALLS_GUIDANCE,
  type SDKMessage,
  type SDKUserMessage,
  type TraceEvent,
} from "./index.js";

let server: ScriptedModelServer;
let root: string;
let cwd: string;
beforeEach(async () => {
  server = await createScriptedModelServer();
  root = await mkdtemp(join(tmpdir(), "lattice-core-builtins-"));
  cwd = join(root, "project");
  await mkdir(join(cwd, "src"), { recursive: true });
  await writeFile(join(cwd, "src", "a.ts"), "export const a = 1; // needle\n");
  await writeFile(join(cwd, "src", "b.ts"), "export const b = 2;\n");
  await writeFile(join(root, "secret.txt"), "outside the project\n");
});
afterEach(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

interface Interval {
  readonly id: string;
  readonly name: string;
  readonly start: number;
  readonly end: number;
  readonly inFlight: number;
}

function intervals(events: readonly TraceEvent[]): Interval[] {
  const started = new Map<string, { time: number; inFlight: number; name: string }>();
  const result: Interval[] = [];
  for (const event of events) {
    if (event.type === "tool_call_started") {
      started.set(event.id, { time: event.time, inFlight: event.inFlight, name: event.name });
    }
    if (event.type === "tool_call_finished") {
      const start = started.get(event.id);
      if (start !== undefined) {
        result.push({
          id: event.id,
          name: start.name,
          start: start.time,
          end: event.time,
          inFlight: start.inFlight,
        });
      }
    }
  }
  return result;
}

const overlaps = (a: Interval, b: Interval): boolean => a.start < b.end && b.start < a.end;

describe("built-in tools through createAgent({ builtinTools, cwd }) (T15, T16)", () => {
  it("T16: Read and Grep overlap in one batch; Write and Edit never overlap anything", async () => {
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "r1", name: "Read", input: { file_path: "src/a.ts" } },
          { type: "tool_use", id: "g1", name: "Grep", input: { pattern: "needle" } },
          { type: "tool_use", id: "r2", name: "Read", input: { file_path: "src/b.ts" } },
          {
            type: "tool_use",
            id: "w1",
            name: "Write",
            input: { file_path: "src/c.ts", content: "export const c = 3;\n" },
          },
          {
            type: "tool_use",
            id: "e1",
            name: "Edit",
            input: { file_path: "src/a.ts", old_string: "= 1", new_string: "= 10" },
          },
          {
            type: "tool_use",
            id: "w2",
            name: "Write",
            input: { file_path: "src/d.ts", content: "export const d = 4;\n" },
          },
        ],
      },
      { content: [{ type: "text", text: "done" }] },
    );
    const events: TraceEvent[] = [];
    const agent = createAgent({
      apiKey: "sk-test",
      baseURL: server.anthropicBaseURL,
      model: "scripted",
      builtinTools: ["Read", "Grep", "Write", "Edit"],
      cwd,
      onTrace: (event) => void events.push(event),
    });
    const result = await agent.run("Look around, then write");
    expect(result.result).toBe("done");
    const firstRequest = server.requests[0]?.body as { system?: string } | undefined;
    expect(firstRequest?.system).toContain(PARALLEL_TOOL_CALLS_GUIDANCE);

    const calls = intervals(events);
    expect(calls.map((call) => call.id)).toHaveLength(6);
    const reads = calls.filter((call) => ["r1", "g1", "r2"].includes(call.id));
    const writes = calls.filter((call) => ["w1", "e1", "w2"].includes(call.id));
    // The three safe calls all started before any of them finished: they overlapped.
    expect(Math.max(...reads.map((call) => call.start))).toBeLessThan(
      Math.min(...reads.map((call) => call.end)),
    );
    expect(Math.max(...reads.map((call) => call.inFlight))).toBe(3);
    // Each Write/Edit ran alone, in tool_use order, after the reads.
    for (const write of writes) {
      expect(write.inFlight).toBe(1);
      for (const other of calls) {
        if (other.id !== write.id) expect(overlaps(write, other)).toBe(false);
      }
    }
    expect(writes.map((call) => call.id)).toEqual(["w1", "e1", "w2"]);
    expect(writes[0]?.start).toBeGreaterThanOrEqual(Math.max(...reads.map((call) => call.end)));
    expect(await readFile(join(cwd, "src", "a.ts"), "utf8")).toBe(
      "export const a = 10; // needle\n",
    );
    expect(await readFile(join(cwd, "src", "c.ts"), "utf8")).toBe("export const c = 3;\n");
    expect(await readFile(join(cwd, "src", "d.ts"), "utf8")).toBe("export const d = 4;\n");
  });

  it("an escape from cwd is answered with is_error through the agent, and touches nothing", async () => {
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "x1", name: "Read", input: { file_path: "../secret.txt" } },
          {
            type: "tool_use",
            id: "x2",
            name: "Write",
            input: { file_path: join(root, "secret.txt"), content: "overwritten" },
          },
        ],
      },
      { content: [{ type: "text", text: "I cannot reach that file." }] },
    );
    const agent = createAgent({
      apiKey: "sk-test",
      baseURL: server.anthropicBaseURL,
      model: "scripted",
      builtinTools: ["Read", "Write"],
      cwd,
    });
    const messages: SDKMessage[] = [];
    for await (const message of agent.query("Read the secret")) messages.push(message);
    const user = messages.find((message): message is SDKUserMessage => message.type === "user");
    expect(user?.message.content.map((block) => block.is_error)).toEqual([true, true]);
    for (const block of user?.message.content ?? []) {
      expect(JSON.stringify(block.content)).toContain("outside the working directory");
      expect(JSON.stringify(block.content)).not.toContain("outside the project");
    }
    expect(await readFile(join(root, "secret.txt"), "utf8")).toBe("outside the project\n");
    expect(messages.at(-1)).toMatchObject({ subtype: "success" });
  });
});

describe("allowHardLinks through createAgent({ builtinTools, cwd, allowHardLinks }) (H10)", () => {
  const readHardLink = async (allowHardLinks?: boolean): Promise<SDKUserMessage | undefined> => {
    server.enqueue(
      {
        content: [{ type: "tool_use", id: "h1", name: "Read", input: { file_path: "linked.txt" } }],
      },
      { content: [{ type: "text", text: "done" }] },
    );
    const agent = createAgent({
      apiKey: "sk-test",
      baseURL: server.anthropicBaseURL,
      model: "scripted",
      builtinTools: ["Read"],
      cwd,
      ...(allowHardLinks === undefined ? {} : { allowHardLinks }),
    });
    const messages: SDKMessage[] = [];
    for await (const message of agent.query("Read the linked file")) messages.push(message);
    return messages.find((message): message is SDKUserMessage => message.type === "user");
  };

  it("H10: Read refuses a hard link to a file outside cwd by default, and reads it with allowHardLinks: true", async () => {
    // linked.txt inside the project is the same file as secret.txt outside it.
    await link(join(root, "secret.txt"), join(cwd, "linked.txt"));
    const refused = (await readHardLink())?.message.content[0];
    expect(refused?.is_error).toBe(true);
    expect(JSON.stringify(refused?.content)).toContain("allowHardLinks");
    expect(JSON.stringify(refused?.content)).not.toContain("outside the project");
    const allowed = (await readHardLink(true))?.message.content[0];
    expect(allowed?.is_error).not.toBe(true);
    expect(JSON.stringify(allowed?.content)).toContain("outside the project");
  });

  it("H10: createAgent checks allowHardLinks is a boolean", () => {
    expect(() =>
      createAgent({
        apiKey: "sk-test",
        builtinTools: ["Read"],
        cwd,
        allowHardLinks: "yes" as never,
      }),
    ).toThrow('AgentOptions: option "allowHardLinks" must be true or false, received "yes".');
  });
});

describe("WebFetch in an agent (T41, T42)", () => {
  it('T42: builtinTools: ["WebFetch"] offers the tool; a URL on the model\'s own machine comes back refused, as an is_error result', async () => {
    // The scripted model server itself is on 127.0.0.1: the model asks WebFetch for it.
    server.enqueue(
      {
        content: [
          {
            type: "tool_use",
            id: "call_web",
            name: "WebFetch",
            input: { url: `${server.url}/v1/messages` },
          },
        ],
        stopReason: "tool_use",
      },
      { content: [{ type: "text", text: "That address is refused." }] },
    );
    const agent = createAgent({
      apiKey: "sk-test-webfetch",
      baseURL: server.anthropicBaseURL,
      model: "scripted",
      builtinTools: ["WebFetch"],
      cwd,
    });
    const result = await agent.run("Fetch the model server");
    expect(result.subtype).toBe("success");
    const sent = server.requests[0]?.body as { tools: { name: string }[] };
    expect(sent.tools.map((tool) => tool.name)).toContain("WebFetch");
    const answer = result.messages[2]?.content as unknown as {
      is_error?: boolean;
      content: { text: string }[];
    }[];
    expect(answer[0]?.is_error).toBe(true);
    expect(answer[0]?.content[0]?.text).toMatch(
      /127\.0\.0\.1 is a private, local or reserved address/,
    );
  });
});
