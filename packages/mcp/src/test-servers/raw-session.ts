/** The headers of a Streamable HTTP POST. */
export const MCP_POST_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
} as const;

/**
 * Test helper: the body of a 2025-era `initialize` request, as a client that speaks MCP by
 * hand sends it.
 *
 * @param clientName - The client's name.
 */
export function initializeBody(clientName = "raw"): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: clientName, version: "1" },
    },
  });
}

/**
 * Test helper: opens a 2025-era session with a raw `initialize` (and abandons it).
 *
 * @param url - The MCP endpoint.
 * @returns The session id.
 */
export async function openRawSession(url: string): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: MCP_POST_HEADERS,
    body: initializeBody("abandoning"),
  });
  await response.text();
  const id = response.headers.get("mcp-session-id");
  if (response.status !== 200 || id === null) {
    throw new Error(`initialize answered ${response.status} without a session id`);
  }
  return id;
}

/**
 * Test helper: sends one JSON-RPC message in a session.
 *
 * @param url - The MCP endpoint.
 * @param sessionId - The session.
 * @param message - The message, `{ jsonrpc: "2.0", ... }`.
 * @returns The HTTP status and the body.
 */
export async function postInSession(
  url: string,
  sessionId: string,
  message: object,
): Promise<{ readonly status: number; readonly body: string }> {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      ...MCP_POST_HEADERS,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-06-18",
    },
    body: JSON.stringify(message),
  });
  return { status: response.status, body: await response.text() };
}
