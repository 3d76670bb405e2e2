import type { IncomingMessage } from "node:http";
import { isSensitiveHeader } from "../transport/redact-secret.js";

// What the scripted model server reads from an incoming request.

/** Reads a request body as UTF-8 text. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () =>
      resolve(
        chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8"),
      ),
    );
    req.on("error", reject);
  });
}

/** The request headers as the log keeps them: credential headers `"[redacted]"`. */
export function redactHeaders(headers: IncomingMessage["headers"]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(headers)) {
    const value = headers[key];
    if (value === undefined) continue;
    out[key] = isSensitiveHeader(key)
      ? "[redacted]"
      : Array.isArray(value)
        ? value.join(", ")
        : value;
  }
  return out;
}

/** A request header, several values joined with commas. */
export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(",") : value;
}

/** The key a request presents: `x-api-key` (Anthropic) or a bearer token. */
export function presentedKey(
  req: IncomingMessage,
  protocol: "anthropic" | "openai",
): string | undefined {
  const apiKey = req.headers["x-api-key"];
  if (protocol === "anthropic" && typeof apiKey === "string") return apiKey;
  const authorization = req.headers.authorization;
  if (typeof authorization === "string" && authorization.startsWith("Bearer "))
    return authorization.slice(7);
  return undefined;
}

/** The name of a request's first tool, in its protocol's shape. */
export function firstToolName(
  tools: unknown,
  protocol: "anthropic" | "openai",
): string | undefined {
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  const first = tools[0] as { name?: unknown; function?: { name?: unknown } };
  const name = protocol === "anthropic" ? first?.name : first?.function?.name;
  return typeof name === "string" ? name : undefined;
}
