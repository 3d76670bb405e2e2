import { createAgent, type SDKResultMessage } from "agent-lattice";
import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedTurn,
} from "agent-lattice/testing";
import { z } from "zod/v4";

/** The typed answer: what the agent extracts from an invoice's text. */
export const Invoice = z.object({
  vendor: z.string().describe("The company that sent the invoice"),
  invoiceNumber: z.string(),
  currency: z.enum(["EUR", "USD", "GBP"]),
  lines: z.array(
    z.object({ description: z.string(), quantity: z.number(), unitPrice: z.number() }),
  ),
  total: z.number().describe("The amount due, taxes included"),
});
export type Invoice = z.infer<typeof Invoice>;

const INVOICE_TEXT = `ACME Cloud GmbH — Invoice INV-2026-0412
8 × Team plan seat, 12.00 EUR each
1 × Priority support, 30.00 EUR
VAT 19 %: 23.94 EUR
Amount due: 149.94 EUR`;

const ANSWER: Invoice = {
  vendor: "ACME Cloud GmbH",
  invoiceNumber: "INV-2026-0412",
  currency: "EUR",
  lines: [
    { description: "Team plan seat", quantity: 8, unitPrice: 12 },
    { description: "Priority support", quantity: 1, unitPrice: 30 },
  ],
  total: 149.94,
};

/**
 * The offline model: its first answer leaves out the total (so the run shows a validation
 * error going back to the model), its second is complete. It answers the way the request asks:
 * JSON text under native structured output (`output_config`), a `final_answer` call otherwise.
 */
function offlineAnswer(request: RecordedRequest): ScriptedTurn {
  const body = request.body as { messages: unknown[]; output_config?: unknown };
  const { total: _left, ...first } = ANSWER;
  const answer = body.messages.length === 1 ? first : ANSWER;
  return body.output_config !== undefined
    ? { content: [{ type: "text", text: JSON.stringify(answer) }] }
    : { content: [{ type: "tool_use", name: "final_answer", input: answer }] };
}

/**
 * Extracts a typed invoice from text with `outputSchema`: offline against the scripted model
 * server unless DEEPSEEK_API_KEY or ANTHROPIC_API_KEY is set. Prints the mode the answer was
 * asked in, each invalid answer sent back, and the typed result.
 */
export async function extractInvoice(
  print: (line: string) => void = (line) => console.log(line),
  env: Record<string, string | undefined> = process.env,
): Promise<SDKResultMessage<Invoice>> {
  const deepseekKey = env.DEEPSEEK_API_KEY;
  const anthropicKey = env.ANTHROPIC_API_KEY;
  const server =
    deepseekKey || anthropicKey
      ? undefined
      : await createScriptedModelServer({ respond: offlineAnswer });
  const endpoint = server
    ? { apiKey: "offline", baseURL: server.anthropicBaseURL, model: "scripted-model" }
    : deepseekKey
      ? {
          apiKey: deepseekKey,
          baseURL: "https://api.deepseek.com/anthropic",
          model: "deepseek-v4-flash",
        }
      : { apiKey: anthropicKey, model: "claude-sonnet-4-6" };
  const agent = createAgent({
    ...endpoint,
    systemPrompt: "You extract invoices exactly as written. Amounts are numbers.",
    outputSchema: Invoice,
    onTrace: (event) => {
      if (event.type === "model_request_started" && event.turn === 1) {
        print(`\ninvoice extraction: typed output, asked as ${event.outputMode}`);
      }
    },
  });
  try {
    const result = await agent.run(`Extract this invoice:\n\n${INVOICE_TEXT}`);
    for (const message of result.messages) {
      if (message.role !== "user" || typeof message.content === "string") continue;
      for (const block of message.content) {
        // Native mode sends an invalid answer back as text; forced_tool as the final_answer
        // call's input error.
        const text =
          block.type === "text"
            ? block.text
            : block.type === "tool_result" && block.is_error === true
              ? JSON.stringify(block.content)
              : undefined;
        if (text !== undefined) print(`  sent back: ${text.split("\n")[0]}`);
      }
    }
    if (result.subtype === "success") {
      const invoice = result.output;
      print(
        `  ${invoice.vendor} ${invoice.invoiceNumber}: ${invoice.lines.length} lines, total ${invoice.total.toFixed(2)} ${invoice.currency} (${result.numTurns} model calls)`,
      );
    } else {
      print(`  ${result.subtype}: ${result.errors.join("; ")}`);
    }
    return result;
  } finally {
    await server?.close();
  }
}
