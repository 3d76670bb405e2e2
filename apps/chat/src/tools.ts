import { type AnyToolDefinition, tool } from "agent-lattice";
import { z } from "zod/v4";

/**
 * Asks the person at the terminal a question and resolves with their answer, or with
 * `undefined` when the input has ended. Rejects with an `AbortError` when `signal` aborts.
 */
export type AskUser = (question: string, signal: AbortSignal) => Promise<string | undefined>;

/** Tells the time: the date and time of this computer, in its time zone. */
export const getTime = tool(
  "get_time",
  "Get the current date and time of the user's computer",
  z.object({}),
  async () => ({
    content: new Date().toLocaleString("en-GB", { dateStyle: "full", timeStyle: "long" }),
  }),
);

/**
 * Writes down a note. The note is kept where the whole conversation is kept, in the session,
 * so the model still sees it after a restart.
 */
export const rememberNote = tool(
  "remember_note",
  "Write down something the user wants you to remember. Notes stay in this conversation, across restarts.",
  z.object({ note: z.string().min(1).describe("What to remember, in a short sentence") }),
  async ({ note }) => ({ content: `noted: ${note}` }),
);

/**
 * Makes the `ask_user` tool: the model asks the person at the terminal a question and gets
 * their answer as the tool's result. The call waits for that answer, so it is also the easy
 * place to interrupt a run (Ctrl-C) or kill the process mid-run.
 *
 * @param ask - How to ask; the chat prints the question and reads the next line.
 * @returns The tool definition.
 */
export function askUserTool(ask: AskUser) {
  return tool(
    "ask_user",
    "Ask the user a question and wait for the answer",
    z.object({ question: z.string().min(1) }),
    async ({ question }, { signal }) => {
      const answer = await ask(question, signal);
      if (answer === undefined) {
        return { content: "The user did not answer: the input ended.", isError: true };
      }
      return { content: answer };
    },
  );
}

/**
 * The chat's tools: `get_time`, `remember_note` and `ask_user`.
 *
 * @param ask - How `ask_user` asks its question.
 * @returns The tools, to pass as `createAgent({ tools })`.
 */
export function chatTools(ask: AskUser): AnyToolDefinition[] {
  return [getTime, rememberNote, askUserTool(ask)];
}
