/**
 * LangChain's ChatOpenAI against the edge (issue 13): a plain answer, and a tool bound with
 * `bindTools` and forced with `tool_choice` comes back as a parsed `tool_calls` entry whose
 * arguments match the tool's schema; the tool's result then gets a final answer; `withStructuredOutput`
 * (response_format json_schema) returns an object matching its schema every time.
 */
import assert from "node:assert/strict";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { ChatOpenAI } from "@langchain/openai";
import { newAccount } from "../support/api.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";

const CITIES = ["Paris", "Rome"];
const weatherTool = {
  type: "function" as const,
  function: {
    name: "get_weather",
    description: "Weather in a city",
    parameters: { type: "object", properties: { city: { enum: CITIES } }, required: ["city"], additionalProperties: false },
  },
};

describe("edge: LangChain ChatOpenAI", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  let chat: ChatOpenAI;
  const slug = "langchain";

  before(async () => {
    cloud = await startTestCloud();
    const { client } = await newAccount(cloud);
    await client.createDeployment({ slug, target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
    chat = new ChatOpenAI({ model: slug, apiKey: "unused", maxTokens: 100, maxRetries: 0, configuration: { baseURL: `${cloud.edgeUrl}/d/${slug}/v1` } });
  });
  after(async () => cloud?.dispose());

  it("answers, and runs a forced tool call round trip", async () => {
    const plain = await chat.invoke([new HumanMessage("Tell me about cats.")]);
    assert.ok(String(plain.content).length > 0);

    const question = new HumanMessage("Weather in Paris?");
    const called = await chat.bindTools([weatherTool], { tool_choice: "get_weather" }).invoke([question]);
    const call = called.tool_calls![0];
    assert.equal(call.name, "get_weather");
    assert.ok(CITIES.includes(call.args.city), JSON.stringify(call.args));

    const final = await chat.invoke([question, called as AIMessage, new ToolMessage({ tool_call_id: call.id!, content: "Sunny" })]);
    assert.ok(String(final.content).length > 0);
  });

  it("withStructuredOutput: an object matching the schema, at temperature 1, every time", async () => {
    const schema = { type: "object", properties: { city: { type: "string", enum: CITIES } }, required: ["city"], additionalProperties: false };
    const hot = new ChatOpenAI({
      model: slug,
      apiKey: "unused",
      maxTokens: 40,
      temperature: 1,
      maxRetries: 0,
      configuration: { baseURL: `${cloud.edgeUrl}/d/${slug}/v1` },
    });
    const structured = hot.withStructuredOutput<{ city: string }>(schema, { name: "city_answer", method: "jsonSchema", strict: true });
    for (let i = 0; i < 5; i++) {
      const answer = await structured.invoke([new HumanMessage("Which city?")]);
      assert.deepEqual(Object.keys(answer), ["city"]);
      assert.ok(CITIES.includes(answer.city), JSON.stringify(answer));
    }
  });
});
