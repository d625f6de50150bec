/**
 * The Vercel AI SDK against the edge (issue 13): its default `openai(model)` speaks the
 * Responses API, `openai.chat(model)` Chat Completions, and `@ai-sdk/openai-compatible` Chat Completions
 * as a generic OpenAI-compatible provider; each runs a tool round trip with generateText (call → execute
 * → final answer) and streams text. Real cloud, real llama.cpp.
 */
import assert from "node:assert/strict";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { generateText, jsonSchema, stepCountIs, streamText, tool } from "ai";
import { newAccount } from "../support/api.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";

const CITIES = ["Paris", "Rome"];

describe("edge: the Vercel AI SDK", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  let provider: ReturnType<typeof createOpenAI>;
  let compatible: ReturnType<typeof createOpenAICompatible>;
  const slug = "aisdk";

  before(async () => {
    cloud = await startTestCloud();
    const { client } = await newAccount(cloud);
    await client.createDeployment({ slug, target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
    provider = createOpenAI({ baseURL: `${cloud.edgeUrl}/d/${slug}/v1`, apiKey: "unused" });
    compatible = createOpenAICompatible({ name: "svc", baseURL: `${cloud.edgeUrl}/d/${slug}/v1`, apiKey: "unused" });
  });
  after(async () => cloud?.dispose());

  const roundTrip = async (model: Parameters<typeof generateText>[0]["model"]) => {
    const seen: unknown[] = [];
    const result = await generateText({
      model,
      prompt: "Weather in Paris?",
      maxOutputTokens: 100,
      tools: {
        get_weather: tool({
          description: "Weather in a city",
          inputSchema: jsonSchema<{ city: string }>({
            type: "object",
            properties: { city: { enum: CITIES } },
            required: ["city"],
            additionalProperties: false,
          }),
          execute: async (input) => {
            seen.push(input);
            return "Sunny";
          },
        }),
      },
      // svc-tiny cannot choose tools: force the call, then let it answer.
      toolChoice: { type: "tool", toolName: "get_weather" },
      prepareStep: ({ stepNumber }) => (stepNumber > 0 ? { toolChoice: "none" } : undefined),
      stopWhen: stepCountIs(2),
    });
    assert.equal(result.steps.length, 2);
    assert.equal(result.steps[0].toolCalls[0].toolName, "get_weather");
    assert.equal(seen.length, 1);
    assert.ok(CITIES.includes((seen[0] as { city: string }).city), JSON.stringify(seen[0]));
    assert.ok(result.text.length > 0, "a final answer after the tool result");
  };

  it("openai(model), the Responses API: a tool round trip with generateText", async () => roundTrip(provider(slug)));
  it("openai.chat(model), Chat Completions: a tool round trip with generateText", async () => roundTrip(provider.chat(slug)));

  it("@ai-sdk/openai-compatible: a tool round trip with generateText", async () => roundTrip(compatible(slug)));

  it("streamText through all three", async () => {
    for (const model of [provider(slug), provider.chat(slug), compatible(slug)]) {
      const result = streamText({ model, prompt: "Tell me about cats.", maxOutputTokens: 20 });
      let text = "";
      for await (const delta of result.textStream) text += delta;
      assert.ok(text.length > 0);
      assert.equal(text, await result.text);
    }
  });
});
