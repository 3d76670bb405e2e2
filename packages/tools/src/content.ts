/** A block of plain text, in a tool result or a message. */
export interface TextBlock {
  readonly type: "text";
  /** The text. */
  readonly text: string;
}

/** Where an image's bytes come from: inline base64 data or a URL the API fetches. */
export type ImageSource =
  | {
      readonly type: "base64";
      /** For example `"image/png"`, `"image/jpeg"`, `"image/gif"`, `"image/webp"`. */
      readonly media_type: string;
      /** The image bytes, base64-encoded. */
      readonly data: string;
    }
  | {
      readonly type: "url";
      /** An `https:` URL the model API can fetch. */
      readonly url: string;
    };

/** An image block, in a tool result or a user message. Wire names are kept as the APIs spell them. */
export interface ImageBlock {
  readonly type: "image";
  /** The image's bytes or address. */
  readonly source: ImageSource;
}

/** A block a tool may return in `content` (T5): text or an image. */
export type ToolResultContentBlock = TextBlock | ImageBlock;
