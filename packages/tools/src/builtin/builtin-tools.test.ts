import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InvalidOptionError, UnknownOptionError } from "../index.js";
import { BUILTIN_TOOL_NAMES, builtinTools } from "./index.js";
import { createFixture, type Fixture } from "./test-fixture.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await createFixture();
});
afterAll(() => fixture.cleanUp());

describe("builtinTools()", () => {
  it("T16: Read, LS, Glob, Grep and WebFetch are concurrency-safe; Write, Edit and Bash are not", () => {
    const tools = builtinTools({ tools: [...BUILTIN_TOOL_NAMES], cwd: fixture.cwd });
    const safety = Object.fromEntries(
      tools.map((tool) => [tool.name, tool.isConcurrencySafe?.({}) === true]),
    );
    expect(safety).toEqual({
      Read: true,
      LS: true,
      Glob: true,
      Grep: true,
      Write: false,
      Edit: false,
      Bash: false,
      WebFetch: true,
    });
    for (const name of ["Write", "Edit", "Bash"]) {
      expect(tools.find((tool) => tool.name === name)).not.toHaveProperty("isConcurrencySafe");
    }
  });

  it('T23: every built-in has kind "builtin" and is frozen', () => {
    for (const tool of builtinTools({ tools: [...BUILTIN_TOOL_NAMES], cwd: fixture.cwd })) {
      expect(tool.kind).toBe("builtin");
      expect(Object.isFrozen(tool)).toBe(true);
      expect(tool.inputSchema.type).toBe("object");
    }
  });

  it("lists the names in the documented order", () => {
    expect(BUILTIN_TOOL_NAMES).toEqual([
      "Read",
      "LS",
      "Glob",
      "Grep",
      "Write",
      "Edit",
      "Bash",
      "WebFetch",
    ]);
  });

  it("makes only the tools named, in the order named: none by default, Write/Edit/Bash only when named", () => {
    expect(builtinTools({ tools: [], cwd: fixture.cwd })).toEqual([]);
    const names = builtinTools({ tools: ["Grep", "Read"], cwd: fixture.cwd }).map((t) => t.name);
    expect(names).toEqual(["Grep", "Read"]);
  });

  it("gives the models' familiar input names", () => {
    const tools = builtinTools({ tools: [...BUILTIN_TOOL_NAMES], cwd: fixture.cwd });
    const properties = Object.fromEntries(
      tools.map((tool) => [tool.name, Object.keys(tool.inputSchema.properties ?? {})]),
    );
    expect(properties).toEqual({
      Read: ["file_path", "offset", "limit"],
      LS: ["path"],
      Glob: ["pattern", "path"],
      Grep: ["pattern", "path", "glob", "output_mode", "-i"],
      Write: ["file_path", "content"],
      Edit: ["file_path", "old_string", "new_string", "replace_all"],
      Bash: ["command", "timeout"],
      WebFetch: ["url"],
    });
  });

  it("refuses an unknown tool name, listing the allowed names", () => {
    expect(() => builtinTools({ tools: ["read" as "Read"], cwd: fixture.cwd })).toThrow(
      'builtinTools(): option "tools" contains "read", which is not a built-in tool. Did you mean "Read"? Allowed names: Read, LS, Glob, Grep, Write, Edit, Bash, WebFetch.',
    );
    expect(() => builtinTools({ tools: ["WebSearch" as "Read"], cwd: fixture.cwd })).toThrow(
      /Allowed names: Read, LS, Glob, Grep, Write, Edit, Bash, WebFetch\./,
    );
    expect(() => builtinTools({ tools: "Read" as unknown as [], cwd: fixture.cwd })).toThrow(
      InvalidOptionError,
    );
    expect(() => builtinTools({ tools: ["Read", "Read"], cwd: fixture.cwd })).toThrow(/twice/);
  });

  it("T31: refuses unknown options, nested ones with a dotted name", () => {
    expect(() => builtinTools({ tools: ["Read"], cwd: fixture.cwd, cwdd: "." } as never)).toThrow(
      'builtinTools(): unknown option "cwdd". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
    expect(() =>
      builtinTools({ tools: ["Bash"], cwd: fixture.cwd, bash: { timeoutMs: 5 } } as never),
    ).toThrow(UnknownOptionError);
    expect(() =>
      builtinTools({ tools: ["Read"], cwd: fixture.cwd, read: { maxLine: 5 } } as never),
    ).toThrow('builtinTools(): unknown option "read.maxLine".');
  });

  it("requires cwd to be an existing directory, with a clear message", () => {
    expect(() => builtinTools({ tools: ["Read"], cwd: `${fixture.root}/missing` })).toThrow(
      /builtinTools\(\): option "cwd" is ".*missing", which does not exist\. Pass an existing directory/,
    );
    expect(() => builtinTools({ tools: ["Read"], cwd: `${fixture.cwd}/a.txt` })).toThrow(
      /option "cwd" is ".*a\.txt", which is not a directory/,
    );
    expect(() => builtinTools({ tools: ["Read"] } as never)).toThrow(
      /option "cwd" must be a non-empty directory path, received undefined/,
    );
    expect(() =>
      builtinTools({ tools: ["Read"], cwd: fixture.cwd, additionalDirectories: ["/nope/x"] }),
    ).toThrow(/option "additionalDirectories\[0\]" is "\/nope\/x", which does not exist/);
  });

  it("checks caps", () => {
    expect(() =>
      builtinTools({ tools: ["Bash"], cwd: fixture.cwd, bash: { defaultTimeoutMs: 700_000 } }),
    ).toThrow('builtinTools(): option "bash.defaultTimeoutMs" must be at most 600000');
    expect(() =>
      builtinTools({ tools: ["Read"], cwd: fixture.cwd, read: { maxBytes: 0 } }),
    ).toThrow('option "read.maxBytes" must be a positive integer, received 0.');
  });
});
