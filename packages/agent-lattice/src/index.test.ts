import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import * as core from "@lattice/core";
import * as coreTesting from "@lattice/core/testing";
import * as providers from "@lattice/providers";
import * as testingServer from "@lattice/providers/testing";
import * as scheduler from "@lattice/scheduler";
import * as tools from "@lattice/tools";
import * as builtinTools from "@lattice/tools/builtin";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import * as builtin from "./builtin.js";
import * as umbrella from "./index.js";
import * as testing from "./testing.js";

const indexFile = fileURLToPath(new URL("./index.ts", import.meta.url));

/** The names src/index.ts re-exports, types included, in the order it lists them. */
function umbrellaNames(): string[] {
  const source = ts.createSourceFile(
    indexFile,
    readFileSync(indexFile, "utf8"),
    ts.ScriptTarget.ES2022,
  );
  return source.statements.flatMap((statement) =>
    ts.isExportDeclaration(statement) &&
    statement.exportClause !== undefined &&
    ts.isNamedExports(statement.exportClause)
      ? statement.exportClause.elements.map((element) => element.name.text)
      : [],
  );
}

describe("agent-lattice re-exports", () => {
  it('T1: `import { createAgent, tool } from "agent-lattice"` are the scoped packages\' functions', () => {
    expect(umbrella.tool).toBe(tools.tool);
    expect(umbrella.createAgent).toBe(core.createAgent);
    const calculator = umbrella.tool(
      "calculator",
      "d",
      z.object({ expr: z.string() }),
      async () => ({
        content: "1",
      }),
    );
    expect(calculator.kind).toBe("tool");
  });

  it("every runtime export of agent-lattice is the value its package exports", () => {
    const packages: Record<string, unknown>[] = [core, providers, scheduler, tools];
    for (const [name, value] of Object.entries(umbrella)) {
      const owner = packages.find((source) => Object.hasOwn(source, name));
      expect(owner, name).toBeDefined();
      expect(value, name).toBe(owner?.[name]);
    }
  });

  it.each([
    ["@lattice/tools/builtin", builtinTools, builtin],
    ["@lattice/providers/testing", testingServer, testing],
    ["@lattice/core/testing", coreTesting, testing],
  ])("re-exports every runtime export of %s", (_name, source, target) => {
    for (const [name, value] of Object.entries(source)) {
      expect(target, name).toHaveProperty(name);
      expect((target as Record<string, unknown>)[name], name).toBe(value);
    }
  });

  it("the re-export lists (types included) match scripts/user-api.mjs and the packages' entry points", () => {
    const script = fileURLToPath(new URL("../scripts/sync-exports.mjs", import.meta.url));
    expect(() =>
      execFileSync(process.execPath, [script, "--check"], { stdio: "pipe" }),
    ).not.toThrow();
  });
});

describe("E6: agent-lattice exports the user API only", () => {
  it("E6: about 100 names, types included, and never more than 110", () => {
    const names = umbrellaNames();
    expect(new Set(names).size).toBe(names.length);
    expect(names.length).toBeGreaterThanOrEqual(80);
    expect(names.length).toBeLessThanOrEqual(110);
  });

  it("E6: no scheduler internal, validator, serializer, constant or run log entry type", () => {
    const internals = [
      // Scheduler internals.
      "planToolBatch",
      "runToolBatch",
      "runTool",
      "findEndTurn",
      "resolveToolConcurrency",
      "isConcurrencySafeCall",
      "validateToolBatchPolicy",
      // Validators and serializers.
      "checkAppendOptions",
      "checkApprovalDecisions",
      "checkExpectedVersion",
      "checkSessionId",
      "serializeSessionEntries",
      "parseToolInput",
      "toJsonSchema",
      // Constants.
      "MAX_TOOL_INPUT_DEPTH",
      "MAX_TOOL_INPUT_LENGTH",
      "TOOL_NAME_PATTERN",
      "PARALLEL_TOOL_CALLS_GUIDANCE",
      "DEFAULT_MAX_DEPTH",
      "DEFAULT_MAX_TOKENS",
      "DEFAULT_MAX_TURNS",
      "DEFAULT_ABORT_GRACE_MS",
      "DEFAULT_TOOL_CONCURRENCY",
      "TOOL_CONCURRENCY_MODES",
      // The run log's entry types (their union, RunLogEntry, stays: apps read sessions).
      "RunStartedEntry",
      "RunResumedEntry",
      "ReplyEntry",
      "ToolResultEntry",
      "InterruptEntry",
      "DecisionsEntry",
      "LoggedDecision",
      "MailEntry",
      "RunFinishedEntry",
    ];
    const names = new Set(umbrellaNames());
    expect(internals.filter((name) => names.has(name))).toEqual([]);
    expect(Object.keys(umbrella).filter((name) => /^(DEFAULT|MAX)_/.test(name))).toEqual([]);
  });

  it("E6: every name has TSDoc where it is declared", () => {
    const program = ts.createProgram([indexFile], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      customConditions: ["@lattice/source"],
      skipLibCheck: true,
      strict: true,
    });
    const checker = program.getTypeChecker();
    const module = checker.getSymbolAtLocation(program.getSourceFile(indexFile)!)!;
    const exported = checker.getExportsOfModule(module);
    expect(exported.map((symbol) => symbol.name).sort()).toEqual(umbrellaNames().sort());
    const undocumented = exported
      .filter((symbol) => {
        const target = checker.getAliasedSymbol(symbol);
        return ts.displayPartsToString(target.getDocumentationComment(checker)).trim() === "";
      })
      .map((symbol) => symbol.name);
    expect(undocumented).toEqual([]);
  }, 60_000);
});
