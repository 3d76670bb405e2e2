import { LatticeError } from "@lattice/tools";

/** The codes of a {@link ChatRequestError}, each with the HTTP status a server answers with. */
export type ChatRequestErrorCode =
  /** The body is larger than `maxBodyBytes` (413). */
  | "chat_body_too_large"
  /** The body is not JSON, or not `{ id?, messages: UIMessage[] }` (400). */
  | "chat_body_invalid"
  /** The messages are not a conversation a model API accepts (R4), or hold a part Lattice cannot send (400). */
  | "chat_history_invalid"
  /** An approval answer names no call waiting in the session, or the session has nothing paused (409). */
  | "approval_unknown"
  /** The session has a run in progress or one that failed to end (409). */
  | "chat_busy";

const STATUS: { readonly [code in ChatRequestErrorCode]: number } = {
  chat_body_too_large: 413,
  chat_body_invalid: 400,
  chat_history_invalid: 400,
  approval_unknown: 409,
  chat_busy: 409,
};

/**
 * A chat request the server cannot take (W9): what was wrong with it, as a 4xx answer. Its
 * message names the rule broken and the message or part at fault, never a key or a file path.
 */
export class ChatRequestError extends LatticeError {
  /** The HTTP status to answer with. */
  readonly status: number;
  declare readonly code: ChatRequestErrorCode;

  /**
   * @param code - What kind of problem it is.
   * @param message - What is wrong, with what, and what to do.
   * @param options - Standard `ErrorOptions`, for example `{ cause }`.
   */
  constructor(code: ChatRequestErrorCode, message: string, options?: ErrorOptions) {
    super(code, message, options);
    this.name = "ChatRequestError";
    this.status = STATUS[code];
  }

  /** The JSON body a server answers with: `{ error: { code, message } }`. */
  toJSON(): { error: { code: ChatRequestErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}
