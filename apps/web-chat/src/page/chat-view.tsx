import { useChat } from "@ai-sdk/react";
import type { LatticeUIMessage } from "@lattice/web";
import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from "ai";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { AssistantMessage } from "./assistant-message.js";

// The server keeps the conversation (a Lattice session): send it only the newest message, so
// a long chat never outgrows the server's body limit. Approval answers live in that message.
const transport = new DefaultChatTransport<LatticeUIMessage>({
  api: "/api/chat",
  prepareSendMessagesRequest: ({ id, messages, trigger }) => ({
    body: { id, message: messages.at(-1), trigger },
  }),
});

/** Options of {@link ChatView}. */
export interface ChatViewProps {
  /** The chat's id: the Lattice session. */
  readonly id: string;
  /** The conversation so far, from the server. */
  readonly initialMessages: LatticeUIMessage[];
}

/** The conversation and the message box, on `useChat`. */
export function ChatView({ id, initialMessages }: ChatViewProps) {
  const [stopped, setStopped] = useState<ReadonlySet<string>>(() => new Set());
  const { messages, sendMessage, status, stop, error, addToolApprovalResponse, clearError } =
    useChat<LatticeUIMessage>({
      id,
      messages: initialMessages,
      transport,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onFinish: ({ message, isAbort }) => {
        if (isAbort) setStopped((before) => new Set(before).add(message.id));
      },
    });
  const [input, setInput] = useState("");
  const inputRef = useRef<HTMLInputElement>(null);
  const endRef = useRef<HTMLDivElement>(null);
  const busy = status === "submitted" || status === "streaming";
  const last = messages.at(-1);
  const lastStopped = last !== undefined && stopped.has(last.id) && !busy;

  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: "end" });
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const text = input.trim();
    if (text === "" || busy) return;
    clearError();
    setInput("");
    void sendMessage({ text });
  };

  return (
    <main className="chat">
      <section className="messages" aria-label="Conversation">
        {messages.length === 0 && (
          <p className="note">
            Ask for the weather in Paris and Tokyo, email the report to ann and bob, or run the long
            job.
          </p>
        )}
        {messages.map((message) =>
          message.role === "user" ? (
            <article key={message.id} className="message user" aria-label="You">
              {message.parts.map((part, index) =>
                part.type === "text" ? (
                  // biome-ignore lint/suspicious/noArrayIndexKey: parts have no id; their order is fixed.
                  <p key={index}>{part.text}</p>
                ) : null,
              )}
            </article>
          ) : (
            <AssistantMessage
              key={message.id}
              message={message}
              streaming={busy && message === last}
              stopped={stopped.has(message.id)}
              // Only the newest message's calls can still be answered, and not while a request runs.
              canAnswer={message === last && !busy}
              onApproval={(approvalId, approved) => {
                void addToolApprovalResponse({
                  id: approvalId,
                  approved,
                  ...(approved ? {} : { reason: "denied in the web chat" }),
                });
              }}
            />
          ),
        )}
        <div ref={endRef} />
      </section>
      <p className="status" role="status">
        {status === "submitted"
          ? "Sending…"
          : status === "streaming"
            ? "The assistant is answering…"
            : lastStopped
              ? "Stopped. The run was stopped; send a message to go on."
              : ""}
      </p>
      {error !== undefined && (
        <p className="note error" role="alert">
          {errorText(error)}
        </p>
      )}
      <form className="composer" onSubmit={submit}>
        <label htmlFor="message">Message</label>
        <input
          id="message"
          ref={inputRef}
          value={input}
          autoComplete="off"
          placeholder="Ask something…"
          onChange={(event) => setInput(event.target.value)}
        />
        <button type="submit" disabled={busy}>
          Send
        </button>
        {busy && (
          <button type="button" className="stop" onClick={() => void stop()}>
            Stop
          </button>
        )}
      </form>
    </main>
  );
}

/** A failed request's message: the server's JSON error when there is one. */
function errorText(error: Error): string {
  try {
    const body = JSON.parse(error.message) as { error?: { message?: string } };
    if (typeof body.error?.message === "string") return body.error.message;
  } catch {
    // Not JSON: the message as it is.
  }
  return error.message;
}
