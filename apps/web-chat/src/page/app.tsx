import type { LatticeUIMessage } from "@lattice/web";
import { useEffect, useState } from "react";
import { currentChatId, newChatHref } from "./chat-id.js";
import { ChatView } from "./chat-view.js";

type History =
  | { readonly state: "loading" }
  | { readonly state: "loaded"; readonly messages: LatticeUIMessage[] }
  | { readonly state: "failed"; readonly message: string };

/** The page: the chat named in the address, its conversation loaded from the server. */
export function App() {
  const [chatId] = useState(currentChatId);
  const [history, setHistory] = useState<History>({ state: "loading" });

  useEffect(() => {
    let current = true;
    fetch(`/api/chat/${encodeURIComponent(chatId)}`)
      .then(async (response) => {
        if (!response.ok) throw new Error(`the server answered ${response.status}`);
        const body = (await response.json()) as { messages: LatticeUIMessage[] };
        if (current) setHistory({ state: "loaded", messages: body.messages });
      })
      .catch((error: unknown) => {
        if (current) setHistory({ state: "failed", message: String(error) });
      });
    return () => {
      current = false;
    };
  }, [chatId]);

  return (
    <div className="page">
      <header className="top">
        <h1>Lattice web chat</h1>
        <a className="new-chat" href={newChatHref()}>
          New chat
        </a>
      </header>
      {history.state === "loading" && <p className="note">Loading the conversation…</p>}
      {history.state === "failed" && (
        <p className="note error" role="alert">
          Could not load the conversation ({history.message}). Reload the page to try again.
        </p>
      )}
      {history.state === "loaded" && <ChatView id={chatId} initialMessages={history.messages} />}
    </div>
  );
}
