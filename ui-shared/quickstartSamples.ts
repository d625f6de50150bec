/**
 * Quick start samples for a deployment (SPEC section 4): one operation, POST /v1/chat/completions,
 * in cURL, Python (OpenAI SDK) and JavaScript (OpenAI SDK). The cURL must run exactly as shown,
 * so every argument is single-quoted for POSIX shells.
 */
import type { AuthMode } from "../sdk/wire.js";

export type SampleLanguage = "curl" | "python" | "javascript";

export const SAMPLE_LANGUAGES: readonly { id: SampleLanguage; label: string }[] = [
  { id: "curl", label: "cURL" },
  { id: "python", label: "Python" },
  { id: "javascript", label: "JavaScript" },
];

/** What the user replaces with a key issued in the API keys group. */
export const API_KEY_PLACEHOLDER = "YOUR_API_KEY";
/** OpenAI SDKs refuse an empty key, so `none` deployments get a value that says it is ignored. */
export const NOT_REQUIRED_KEY = "not-required";

export interface SampleInput {
  /** Deployment URL without a trailing path, e.g. `http://my-bot.localhost:7871`. */
  url: string;
  authMode: AuthMode;
  /** Sent as `model`; the edge ignores it because the deployment fixes the target, but SDKs require it. */
  model: string;
}

const PROMPT = "Say hello in one short sentence.";

/** Base URL for OpenAI SDKs: the deployment URL plus `/v1`, never the full operation URL. */
export function sdkBaseUrl(url: string): string {
  return `${url.replace(/\/+$/, "")}/v1`;
}

export function chatCompletionsUrl(url: string): string {
  return `${sdkBaseUrl(url)}/chat/completions`;
}

/** POSIX single-quoting: safe for any text, including quotes and `$`. */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

export function curlSample({ url, authMode, model }: SampleInput): string {
  const body = JSON.stringify({ model, messages: [{ role: "user", content: PROMPT }] });
  const lines = [`curl ${shellQuote(chatCompletionsUrl(url))}`, `-H 'Content-Type: application/json'`];
  if (authMode === "fixed_api_key") lines.push(`-H "Authorization: Bearer ${API_KEY_PLACEHOLDER}"`);
  lines.push(`-d ${shellQuote(body)}`);
  return lines.join(" \\\n  ");
}

export function pythonSample({ url, authMode, model }: SampleInput): string {
  const keyLine =
    authMode === "fixed_api_key"
      ? `    api_key=${JSON.stringify(API_KEY_PLACEHOLDER)},`
      : `    api_key=${JSON.stringify(NOT_REQUIRED_KEY)},  # auth mode is none: no key is required`;
  return [
    "from openai import OpenAI",
    "",
    "client = OpenAI(",
    `    base_url=${JSON.stringify(sdkBaseUrl(url))},`,
    keyLine,
    ")",
    "",
    "completion = client.chat.completions.create(",
    `    model=${JSON.stringify(model)},  # ignored: the deployment fixes the model`,
    `    messages=[{"role": "user", "content": ${JSON.stringify(PROMPT)}}],`,
    ")",
    "print(completion.choices[0].message.content)",
    "",
  ].join("\n");
}

export function javascriptSample({ url, authMode, model }: SampleInput): string {
  const keyLine =
    authMode === "fixed_api_key"
      ? `  apiKey: ${JSON.stringify(API_KEY_PLACEHOLDER)},`
      : `  apiKey: ${JSON.stringify(NOT_REQUIRED_KEY)}, // auth mode is none: no key is required`;
  return [
    'import OpenAI from "openai";',
    "",
    "const client = new OpenAI({",
    `  baseURL: ${JSON.stringify(sdkBaseUrl(url))},`,
    keyLine,
    "});",
    "",
    "const completion = await client.chat.completions.create({",
    `  model: ${JSON.stringify(model)}, // ignored: the deployment fixes the model`,
    `  messages: [{ role: "user", content: ${JSON.stringify(PROMPT)} }],`,
    "});",
    "console.log(completion.choices[0].message.content);",
    "",
  ].join("\n");
}

export function quickstartSample(language: SampleLanguage, input: SampleInput): string {
  switch (language) {
    case "curl":
      return curlSample(input);
    case "python":
      return pythonSample(input);
    case "javascript":
      return javascriptSample(input);
  }
}
