import type { RecordedRequest, ScriptedTurn } from "agent-lattice/testing";

/**
 * What the offline "model" answers, by turn: what a real model would do on this task, so the
 * demo shows the scheduling without a key. Each reply batches what can go together.
 */
export function offlineTurn(request: RecordedRequest): ScriptedTurn {
  const body = request.body as { messages: unknown[] };
  const turn = Math.floor(body.messages.length / 2) + 1;
  const step = { chunkSize: 8, chunkDelayMs: 2 } as const;
  switch (turn) {
    case 1:
      return {
        ...step,
        content: [
          { type: "text", text: "Let me see what the project holds." },
          { type: "tool_use", name: "LS", input: { path: "." } },
          { type: "tool_use", name: "Glob", input: { pattern: "**/*.ts" } },
        ],
      };
    case 2:
      return {
        ...step,
        content: [
          {
            type: "text",
            text: "I'll read the README and both sources, and look for TODOs, at once.",
          },
          { type: "tool_use", name: "Read", input: { file_path: "README.md" } },
          { type: "tool_use", name: "Read", input: { file_path: "src/math.ts" } },
          { type: "tool_use", name: "Read", input: { file_path: "src/strings.ts" } },
          { type: "tool_use", name: "Grep", input: { pattern: "TODO", output_mode: "content" } },
        ],
      };
    case 3:
      return {
        ...step,
        content: [
          { type: "text", text: "Now the fixes, and a changelog." },
          {
            type: "tool_use",
            name: "Edit",
            input: {
              file_path: "src/math.ts",
              old_string: "  // TODO: fix this: it subtracts.\n  return a - b;",
              new_string: "  return a + b;",
            },
          },
          {
            type: "tool_use",
            name: "Edit",
            input: {
              file_path: "src/strings.ts",
              old_string:
                '  // TODO: lower-case the result.\n  return text.trim().replace(/\\s+/g, "-");',
              new_string: '  return text.trim().toLowerCase().replace(/\\s+/g, "-");',
            },
          },
          {
            type: "tool_use",
            name: "Write",
            input: {
              file_path: "CHANGELOG.md",
              content:
                "# Changelog\n\n- Fix `add()`: it subtracted instead of adding.\n- Fix `slugify()`: it now lower-cases the slug.\n",
            },
          },
        ],
      };
    case 4:
      return {
        ...step,
        content: [
          { type: "text", text: "Let me check both files." },
          { type: "tool_use", name: "Read", input: { file_path: "src/math.ts" } },
          { type: "tool_use", name: "Read", input: { file_path: "src/strings.ts" } },
        ],
      };
    default:
      return {
        ...step,
        content: [
          {
            type: "text",
            text: "Fixed add() (it subtracted) and slugify() (it did not lower-case), and added CHANGELOG.md.",
          },
        ],
      };
  }
}
