import {
  type AnyToolDefinition,
  createToolDefinition,
  type NeedsApproval,
  type ToolContext,
  type ToolHandlerResult,
} from "@lattice/tools";
import type { Tool } from "@modelcontextprotocol/client";
import { McpConnectionError } from "./errors.js";
import {
  type CompiledInputSchema,
  JsonSchemaCompiler,
  type McpToolInput,
  type SchemaRole,
  type UncheckedPattern,
} from "./json-schema-validator.js";
import { describeCause } from "./mcp-connection.js";
import type {
  McpToolAnnotations,
  McpToolInfo,
  McpWarning,
  ResolvedMcpServerOptions,
} from "./mcp-server-options.js";
import { findNameCollision, latticeToolName } from "./tool-names.js";

/** What {@link defineMcpTools} needs of its source. */
export interface McpToolsHost {
  /** The source's options. */
  readonly options: ResolvedMcpServerOptions;
  /** Runs one call whose input was validated (M7–M10). */
  readonly call: (
    info: McpToolInfo,
    input: McpToolInput,
    context: ToolContext,
  ) => Promise<ToolHandlerResult>;
  /** Reports a warning (its message is redacted there). */
  readonly warn: (code: McpWarning["code"], toolName: string, message: string) => void;
}

/** How many unchecked patterns a note names; the others are counted. */
const NOTE_PATTERNS = 3;
/** How much of a pattern, and of the reason it is unchecked, a note quotes. */
const NOTE_PATTERN_CHARS = 60;
const NOTE_REASON_CHARS = 100;
/** How many runs a tool remembers having noted its unchecked patterns in. */
const NOTED_RUNS = 1_000;

/**
 * A server's listed tools as Lattice definitions: filtered, named, validated (M3–M6). Their
 * validators come from a compiler of this listing's own, dropped with it (H20). Descriptions,
 * titles and the schemas shown to the model carry none of the source's secrets (H21).
 *
 * @param listed - The tools the server listed.
 * @param host - The source.
 * @throws {@link McpConnectionError} when two tools end with one name (M4).
 */
export function defineMcpTools(
  listed: readonly Tool[],
  host: McpToolsHost,
): readonly AnyToolDefinition[] {
  const o = host.options;
  const compiler = new JsonSchemaCompiler();
  const serverNames = new Set(listed.map((tool) => tool.name));
  for (const [option, names] of [
    ["include", o.include],
    ["exclude", o.exclude],
    [
      "needsApproval",
      typeof o.needsApproval === "object" ? new Set(Object.keys(o.needsApproval)) : undefined,
    ],
  ] as const) {
    for (const name of names ?? []) {
      if (!serverNames.has(name)) {
        host.warn(
          "unknown_tool",
          name,
          `mcp server "${o.name}": the ${option} option names the tool "${name}", which the server does not list (it lists ${[...serverNames].map((n) => `"${n}"`).join(", ") || "no tools"}).`,
        );
      }
    }
  }
  const chosen = listed.filter(
    (tool) => (o.include === undefined || o.include.has(tool.name)) && !o.exclude?.has(tool.name),
  );
  const collision = findNameCollision(
    chosen.map((tool) => [tool.name, latticeToolName(o.prefix, tool.name)] as const),
  );
  if (collision !== undefined) {
    throw new McpConnectionError(
      o.name,
      `mcp server "${o.name}": the tools "${collision.first}" and "${collision.second}" both become "${collision.latticeName}" once prefixed and made to fit ^[a-zA-Z0-9_-]{1,64}$. Leave one out with include or exclude, or change the prefix option.`,
    );
  }
  const definitions: AnyToolDefinition[] = [];
  for (const tool of chosen) {
    const definition = defineTool(tool, compiler, host);
    if (definition !== undefined) definitions.push(definition);
  }
  return Object.freeze(definitions);
}

function defineTool(
  tool: Tool,
  compiler: JsonSchemaCompiler,
  host: McpToolsHost,
): AnyToolDefinition | undefined {
  const o = host.options;
  const redact = o.redactor;
  const latticeName = latticeToolName(o.prefix, tool.name);
  const compiled = compiler.compile(tool.inputSchema as Record<string, unknown>);
  if (!compiled.ok) {
    host.warn(
      "invalid_input_schema",
      tool.name,
      `mcp server "${o.name}": skipped the tool "${tool.name}": its inputSchema is not valid JSON Schema (${compiled.reason}). The server's other tools are available.`,
    );
    return undefined;
  }
  warnOutputSchema(tool, host);
  const notes = new UncheckedNotes(o, tool.name, compiled, host);
  // H21: what the model reads of the tool holds none of the source's secrets.
  const description = redact.text(tool.description ?? "");
  const title = tool.title !== undefined ? redact.text(tool.title) : undefined;
  const annotations: McpToolAnnotations = {
    ...(tool.annotations ?? {}),
    ...(tool.annotations?.title !== undefined
      ? { title: redact.text(tool.annotations.title) }
      : {}),
  };
  const inputSchema = redact.json(tool.inputSchema);
  const info: McpToolInfo = Object.freeze({
    serverName: o.name,
    name: tool.name,
    latticeName,
    ...(title !== undefined ? { title } : {}),
    description,
    inputSchema,
    annotations,
  });
  const safe = concurrencyRule(o.isConcurrencySafe, info);
  const approval = approvalRule(o.needsApproval, info);
  try {
    return createToolDefinition({
      name: latticeName,
      description:
        tool.description !== undefined ? description : (title ?? annotations.title ?? ""),
      kind: "mcp",
      schema: compiled.schema,
      inputSchema: inputSchema as { type: "object" },
      handler: (input: McpToolInput, context: ToolContext) => {
        // H19: the trace says what this call's input was not checked against.
        notes.report(context);
        return host.call(info, input, context);
      },
      ...(safe !== undefined ? { isConcurrencySafe: safe } : {}),
      ...(approval !== undefined ? { needsApproval: approval } : {}),
      ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
      metadata: { mcp: { server: o.name, tool: tool.name, annotations } },
    });
  } catch (error) {
    host.warn(
      "invalid_input_schema",
      tool.name,
      `mcp server "${o.name}": skipped the tool "${tool.name}": ${describeCause(error)}`,
    );
    return undefined;
  }
}

/**
 * What a tool's input is not checked against (H19), told once as a warning (when the tools are
 * listed, or on the first call for a pattern the engine refused when it compiled it) and in
 * the trace of each run that calls the tool, once per run (a `tool_progress` event with
 * `progress: 0`, the one channel from a tool to the trace, whose message starts `Note:`).
 */
class UncheckedNotes {
  readonly #options: ResolvedMcpServerOptions;
  readonly #toolName: string;
  readonly #compiled: CompiledInputSchema & { readonly ok: true };
  readonly #host: McpToolsHost;
  /** How many unchecked patterns were warned about. */
  #warned = 0;
  #note: string | undefined;
  /** The runs whose trace has the note; `undefined` stands for calls outside a run. */
  readonly #noted = new Set<string | undefined>();

  constructor(
    options: ResolvedMcpServerOptions,
    toolName: string,
    compiled: CompiledInputSchema & { readonly ok: true },
    host: McpToolsHost,
  ) {
    this.#options = options;
    this.#toolName = toolName;
    this.#compiled = compiled;
    this.#host = host;
    this.#update();
  }

  /** Called by each call, after its input was validated. */
  report(context: ToolContext): void {
    this.#update();
    if (this.#note === undefined) return;
    const run = context.run?.runId;
    if (this.#noted.has(run)) return;
    if (this.#noted.size >= NOTED_RUNS) this.#noted.clear();
    this.#noted.add(run);
    context.reportProgress?.({ progress: 0, message: this.#note });
  }

  /** Brings the note up to date, and warns about what is new since the last warning. */
  #update(): void {
    const { uncheckedPatterns, uncheckedSchema } = this.#compiled;
    const count = uncheckedPatterns.length;
    const known = this.#note !== undefined || uncheckedSchema === undefined;
    if (this.#warned === count && known) return;
    const describe = (patterns: readonly UncheckedPattern[]) =>
      describeUnchecked(this.#options, this.#toolName, "inputSchema", {
        patterns,
        ...(uncheckedSchema !== undefined ? { schema: uncheckedSchema } : {}),
      });
    const fresh = describe(uncheckedPatterns.slice(this.#warned));
    this.#note = describe(uncheckedPatterns);
    this.#warned = count;
    this.#noted.clear();
    if (fresh !== undefined) {
      this.#host.warn(
        uncheckedSchema !== undefined ? "unchecked_schema" : "unchecked_pattern",
        this.#toolName,
        fresh,
      );
    }
  }
}

/** Warns about what a tool's `structuredContent` is not checked against (H19). */
function warnOutputSchema(tool: Tool, host: McpToolsHost): void {
  if (tool.outputSchema === undefined) return;
  // The same decisions as the SDK's validator, made by the same compiler (see
  // outputSchemaValidator); nothing is compiled here.
  const compiled = new JsonSchemaCompiler().compile(tool.outputSchema, "outputSchema");
  if (!compiled.ok) return;
  const note = describeUnchecked(host.options, tool.name, "outputSchema", {
    patterns: compiled.uncheckedPatterns,
    ...(compiled.uncheckedSchema !== undefined ? { schema: compiled.uncheckedSchema } : {}),
  });
  if (note === undefined) return;
  host.warn(
    compiled.uncheckedSchema !== undefined ? "unchecked_schema" : "unchecked_pattern",
    tool.name,
    note,
  );
}

/**
 * The note for a schema with something left unchecked, redacted, bounded: at most
 * {@link NOTE_PATTERNS} patterns, each quoted short; `undefined` when all is checked.
 */
function describeUnchecked(
  options: ResolvedMcpServerOptions,
  toolName: string,
  role: SchemaRole,
  unchecked: { readonly patterns: readonly UncheckedPattern[]; readonly schema?: string },
): string | undefined {
  const what =
    role === "inputSchema"
      ? `the input of the tool "${toolName}"`
      : `the structuredContent of the tool "${toolName}"`;
  const rest =
    role === "inputSchema"
      ? "the server checks its own input"
      : "the server is trusted for its output";
  const server = `mcp server "${options.name}"`;
  let note: string | undefined;
  if (unchecked.schema !== undefined) {
    note = `Note: ${server}: ${what} is not checked locally: its ${role} ${unchecked.schema}; ${rest}.`;
  } else {
    const patterns = unchecked.patterns;
    if (patterns.length === 0) return undefined;
    const named = patterns
      .slice(0, NOTE_PATTERNS)
      .map((entry) => `${quoteShort(entry.pattern)} (${cut(entry.reason, NOTE_REASON_CHARS)})`);
    const more =
      patterns.length > NOTE_PATTERNS ? ` and ${patterns.length - NOTE_PATTERNS} more` : "";
    const them = patterns.length === 1 ? "it" : "them";
    note = `Note: ${server}: ${what} is not checked against ${patterns.length === 1 ? "the pattern" : `${patterns.length} patterns:`} ${named.join(", ")}${more}: the linear-time engine does not run ${them}. The rest of its ${role} is checked, and ${rest}.`;
  }
  return options.redactor.text(note);
}

/** A pattern as a note quotes it: JSON, at most {@link NOTE_PATTERN_CHARS} of its characters. */
function quoteShort(pattern: UncheckedPattern["pattern"]): string {
  return JSON.stringify(cut(pattern, NOTE_PATTERN_CHARS));
}

function cut(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars)}…`;
}

/** M6: `readOnlyHint: true` means concurrency-safe, unless the source says otherwise. */
function concurrencyRule(
  option: ResolvedMcpServerOptions["isConcurrencySafe"],
  info: McpToolInfo,
): ((input: McpToolInput) => boolean) | undefined {
  if (option === true) return () => true;
  if (option === false) return undefined;
  if (typeof option === "function") return (input) => option(info, input) === true;
  return info.annotations.readOnlyHint === true ? () => true : undefined;
}

function approvalRule(
  option: ResolvedMcpServerOptions["needsApproval"],
  info: McpToolInfo,
): NeedsApproval<McpToolInput> | undefined {
  if (option === undefined) return undefined;
  if (option === true) return true;
  if (typeof option === "function") return (input, context) => option(info, input, context);
  return Object.hasOwn(option, info.name) ? option[info.name] : undefined;
}
