import { InvalidOptionError, isToolSource, UnknownOptionError } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { mcpServer } from "./mcp-server.js";
import type { McpServerOptions } from "./mcp-server-options.js";
import { findNameCollision, latticeToolName } from "./tool-names.js";

const bad = (options: unknown) => () => mcpServer(options as McpServerOptions);

describe("mcpServer options (M1: checked strictly)", () => {
  it("M1: returns a tool source, frozen, that starts nothing", () => {
    const source = mcpServer({ name: "fs", command: "definitely-not-started" });
    expect(isToolSource(source)).toBe(true);
    expect(source).toMatchObject({ kind: "tool_source", name: "fs", transport: "stdio" });
    expect(Object.isFrozen(source)).toBe(true);
    expect(mcpServer({ name: "web", url: "https://example.com/mcp" }).transport).toBe("http");
  });

  it("M1: an unknown option throws the SDK's unknown-option error", () => {
    expect(bad({ name: "fs", command: "x", argv: [] })).toThrow(UnknownOptionError);
    expect(bad({ name: "fs", command: "x", argv: [] })).toThrow(
      'mcpServer("fs"): unknown option "argv". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
  });

  it("M1: a server is either started (command) or reached (url)", () => {
    expect(bad({ name: "fs" })).toThrow(
      'mcpServer("fs"): option "command" is required: give command (and args) to start a stdio server, or url to reach a Streamable HTTP server.',
    );
    expect(bad({ name: "fs", command: "x", url: "http://127.0.0.1/mcp" })).toThrow(
      'mcpServer("fs"): option "url" cannot be given together with command',
    );
    expect(bad({ name: "fs", command: "x", headers: {} })).toThrow(
      'mcpServer("fs"): option "headers" applies to url servers only; this server has a command (stdio).',
    );
    expect(bad({ name: "web", url: "http://127.0.0.1/mcp", cwd: "/" })).toThrow(
      'mcpServer("web"): option "cwd" applies to command (stdio) servers only; this server has a url.',
    );
  });

  it("M1: bad values name the option and what is allowed", () => {
    const cases: [unknown, string][] = [
      [{ command: "x" }, 'option "name" must be 1 to 64 letters'],
      [{ name: "my server", command: "x" }, 'option "name" must be 1 to 64 letters'],
      [{ name: "fs", command: "" }, 'option "command" must be a non-empty string'],
      [{ name: "fs", command: "x", args: "--root /" }, 'option "args" must be an array of strings'],
      [
        { name: "fs", command: "x", env: { A: 1 } },
        'option "env" must be an object of string values',
      ],
      [{ name: "web", url: "not a url" }, 'option "url" must be an http: or https: URL'],
      [{ name: "web", url: "file:///tmp/mcp" }, 'option "url" must be an http: or https: URL'],
      [
        { name: "web", url: "http://h/mcp", headers: { a: 1 } },
        'option "headers" must be an object of string values',
      ],
      [{ name: "fs", command: "x", prefix: 3 }, 'option "prefix" must be a string or false'],
      [
        { name: "fs", command: "x", include: "read" },
        'option "include" must be an array of tool names',
      ],
      [
        { name: "fs", command: "x", isConcurrencySafe: "yes" },
        'option "isConcurrencySafe" must be a boolean or a function',
      ],
      [
        { name: "fs", command: "x", needsApproval: false },
        'option "needsApproval" must be true, a function',
      ],
      [
        { name: "fs", command: "x", needsApproval: { rm: "yes" } },
        'option "needsApproval" must be true, a function',
      ],
      [
        { name: "fs", command: "x", timeoutMs: 0 },
        'option "timeoutMs" must be a number of milliseconds > 0',
      ],
      [{ name: "fs", command: "x", onWarning: "log" }, 'option "onWarning" must be a function'],
    ];
    for (const [options, message] of cases) {
      expect(bad(options)).toThrow(InvalidOptionError);
      expect(bad(options)).toThrow(message);
    }
    expect(bad(undefined)).toThrow('mcpServer(): option "options" are required');
  });
});

describe("tool names (M4)", () => {
  it("M4: prefixes, replaces characters outside [a-zA-Z0-9_-] and cuts to 64", () => {
    expect(latticeToolName("fs__", "read_file")).toBe("fs__read_file");
    expect(latticeToolName("", "files/read file")).toBe("files_read_file");
    expect(latticeToolName("gh.", "search")).toBe("gh_search");
    expect(latticeToolName("x__", "a".repeat(80))).toHaveLength(64);
  });

  it("M4: finds two tools that end with one name", () => {
    expect(
      findNameCollision([
        ["a.b", "a_b"],
        ["c", "c"],
        ["a_b", "a_b"],
      ]),
    ).toEqual({
      first: "a.b",
      second: "a_b",
      latticeName: "a_b",
    });
    expect(
      findNameCollision([
        ["a", "a"],
        ["b", "b"],
      ]),
    ).toBeUndefined();
  });
});
