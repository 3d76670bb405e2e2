import { tool } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { createAgent, createBareAgent, defineAgent } from "./index.js";

const UNKNOWN =
  'AgentOptions: unknown option "bogusOption". Check for a typo, or upgrade the SDK if this option was added in a newer version.';

const echo = tool("echo", "Echo", z.object({ text: z.string() }), async ({ text }) => ({
  content: text,
}));

/** The message of the error `make` throws; fails when it does not throw. */
function messageOf(make: () => unknown): string {
  try {
    make();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("expected a throw");
}

describe("AgentOptions are strict (T31–T33)", () => {
  it.each([
    ["createAgent", createAgent],
    ["createBareAgent", createBareAgent],
  ] as const)("T31, T32: %s throws the exact message on an unknown key", (_name, factory) => {
    expect(messageOf(() => factory({ model: "m", apiKey: "k", bogusOption: true } as never))).toBe(
      UNKNOWN,
    );
  });

  it("T31, T32: defineAgent throws the exact message on an unknown key", () => {
    expect(messageOf(() => defineAgent({ name: "a", bogusOption: 1 } as never))).toBe(UNKNOWN);
  });

  it("T33: host fields spread into the options throw, even when undefined", () => {
    const host = { requestId: undefined };
    expect(() => createAgent({ model: "m", apiKey: "k", ...host } as never)).toThrow(
      'AgentOptions: unknown option "requestId".',
    );
  });

  it("T14: an unknown key inside toolConcurrency is refused like any unknown option", () => {
    expect(() =>
      createAgent({
        model: "m",
        apiKey: "k",
        toolConcurrency: { mode: "safe", maxConcurency: 3 } as never,
      }),
    ).toThrow('unknown option "maxConcurency"');
  });

  it.each([0, -1, 1.5, "4", Number.NaN])(
    "T14: maxConcurrency %s is refused at creation",
    (value) => {
      expect(() =>
        createAgent({
          model: "m",
          apiKey: "k",
          toolConcurrency: { maxConcurrency: value as never },
        }),
      ).toThrow(/maxConcurrency/);
    },
  );

  it("T14: an unknown mode is refused, naming what is allowed", () => {
    expect(() =>
      createAgent({ model: "m", apiKey: "k", toolConcurrency: { mode: "parallel" as never } }),
    ).toThrow(/"safe".*"all".*"sequential"/);
  });

  it("an unknown hook is refused", () => {
    expect(() =>
      createAgent({ model: "m", apiKey: "k", hooks: { onToolResults: () => {} } as never }),
    ).toThrow('unknown option "onToolResults"');
  });

  it("duplicate tool names are refused at creation", () => {
    expect(() => createAgent({ model: "m", apiKey: "k", tools: [echo, echo] })).toThrow(
      'holds two tools named "echo"',
    );
  });

  it("a built-in tool name clashing with a user tool is refused at creation", () => {
    const read = tool("Read", "mine", z.object({}), async () => ({ content: "" }));
    expect(() =>
      createAgent({ model: "m", apiKey: "k", tools: [read], builtinTools: ["Read"] }),
    ).toThrow('holds two tools named "Read"');
  });

  it("createBareAgent refuses builtinTools, saying what to use instead", () => {
    expect(() => createBareAgent({ model: "m", apiKey: "k", builtinTools: ["Read"] })).toThrow(
      /not available in createBareAgent/,
    );
  });

  it("unknown built-in tool names are refused, listing the allowed ones", () => {
    expect(() => createAgent({ model: "m", apiKey: "k", builtinTools: ["Cat" as never] })).toThrow(
      /Read, LS, Glob, Grep, Write, Edit, Bash/,
    );
  });

  it("model is required by createAgent", () => {
    expect(() => createAgent({ apiKey: "k" })).toThrow(/option "model" is required/);
  });

  it("defineAgent requires a name and returns a frozen definition createAgent accepts", () => {
    expect(() => defineAgent({} as never)).toThrow(/option "name" is required/);
    const definition = defineAgent({ name: "helper", model: "m", apiKey: "k", tools: [echo] });
    expect(Object.isFrozen(definition)).toBe(true);
    expect(Object.isFrozen(definition.tools)).toBe(true);
    const agent = createAgent(definition);
    expect(agent.name).toBe("helper");
    expect(agent.model).toBe("m");
  });

  it.each([
    [{ maxTurns: 0 }, /maxTurns.*positive integer/],
    [{ maxTokens: 1.5 }, /maxTokens.*positive integer/],
    [{ temperature: -1 }, /temperature/],
    [{ tools: "echo" }, /tools.*array/],
    [{ tools: [{ name: "x" }] }, /tools\[0\].*not a tool definition/],
    [{ onTrace: "yes" }, /onTrace/],
    [{ includePartialMessages: 1 }, /includePartialMessages/],
    [{ toolBatchPolicy: { validate: 1 } }, /toolBatchPolicy.validate/],
    [{ provider: { stream: () => {} } }, /specification/],
  ])("bad values are refused with a message naming the option: %j", (extra, message) => {
    expect(() => createAgent({ model: "m", apiKey: "k", ...(extra as object) })).toThrow(message);
  });

  it("apiKey or baseURL cannot be combined with an explicit provider", () => {
    const agent = createAgent({ model: "m", apiKey: "k" });
    expect(() => createAgent({ model: "m", provider: agent.provider, apiKey: "k" })).toThrow(
      /cannot be combined with "provider"/,
    );
  });
});

describe("T34: model endpoints named by the product page", () => {
  it("DeepSeek's Anthropic-compatible base URL talks the Anthropic Messages API", () => {
    const agent = createAgent({
      apiKey: "sk-test",
      baseURL: "https://api.deepseek.com/anthropic",
      model: "deepseek-v4-flash",
    });
    expect(agent.provider.name).toBe("anthropic");
    expect(agent.provider.baseURL).toBe("https://api.deepseek.com/anthropic");
    expect(agent.model).toBe("deepseek-v4-flash");
  });

  it("Claude with no baseURL talks to Anthropic", () => {
    const agent = createAgent({ apiKey: "sk-test", model: "claude-sonnet-4-6" });
    expect(agent.provider.name).toBe("anthropic");
    expect(agent.provider.baseURL).toBe("https://api.anthropic.com");
  });
});

describe("built-in tools at assembly", () => {
  it("a cwd that does not exist is refused when the agent is created", () => {
    expect(() =>
      createAgent({ model: "m", apiKey: "k", builtinTools: ["Read"], cwd: "/definitely/not/here" }),
    ).toThrow(/option "cwd" must be an existing directory/);
  });
});
