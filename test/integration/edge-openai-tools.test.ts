/**
 * Tool calls and the Responses API on the edge (issue 13), through the real `openai` client
 * against a real cloud process and llama.cpp with svc-tiny. svc-tiny cannot choose tools, so
 * what is checked is the contract the grammar gives (cloud/inference/tools.ts): `required` and a
 * named function always produce a call with schema-valid arguments, `none` produces text, `auto`
 * produces either a valid call or text, and a call → tool result → answer round trip completes.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import OpenAI from "openai";
import type {
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionMessageToolCall,
  ChatCompletionTool,
} from "openai/resources/chat/completions";
import { rawExchange } from "../support/rawHttp.js";
import { newAccount } from "../support/api.js";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";

const CITIES = ["Paris", "Rome", "Oslo"];
const weatherTool: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Weather in a city",
    parameters: { type: "object", properties: { city: { enum: CITIES }, days: { type: "integer" } }, required: ["city", "days"], additionalProperties: false },
  },
};
const timeTool: ChatCompletionTool = {
  type: "function",
  function: {
    name: "get_time",
    parameters: { type: "object", properties: { zone: { type: "string", maxLength: 8 } }, required: ["zone"], additionalProperties: false },
  },
};
const tools = [weatherTool, timeTool];
const question: ChatCompletionMessageParam[] = [{ role: "user", content: "Weather in Paris?" }];

/** This endpoint only makes function calls (never custom-tool calls). */
const functionOf = (call: ChatCompletionMessageToolCall) => (call as ChatCompletionMessageFunctionToolCall).function;

function assertWeatherArguments(args: string): void {
  const value = JSON.parse(args);
  assert.ok(CITIES.includes(value.city) && Number.isInteger(value.days) && Object.keys(value).length === 2, args);
}

describe("edge: tool calls and the Responses API", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  let openai: OpenAI;
  const slug = "tools";

  before(async () => {
    cloud = await startTestCloud();
    const { client } = await newAccount(cloud);
    await client.createDeployment({ slug, target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
    openai = new OpenAI({ baseURL: `${cloud.edgeUrl}/d/${slug}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(async () => cloud?.dispose());

  describe("chat completions", () => {
    it("a named tool_choice forces that function with schema-valid arguments, 10 samples at temperature 1", async () => {
      const completion = await openai.chat.completions.create({
        model: slug,
        messages: question,
        tools,
        temperature: 1,
        n: 5,
        max_tokens: 100,
        tool_choice: { type: "function", function: { name: "get_weather" } },
      });
      const again = await openai.chat.completions.create({
        model: slug,
        messages: question,
        tools,
        temperature: 1,
        n: 5,
        max_tokens: 100,
        tool_choice: { type: "function", function: { name: "get_weather" } },
      });
      const choices = [...completion.choices, ...again.choices];
      assert.equal(choices.length, 10);
      for (const choice of choices) {
        assert.equal(choice.finish_reason, "tool_calls");
        const calls = choice.message.tool_calls!;
        assert.equal(calls.length, 1);
        assert.equal(calls[0].type, "function");
        assert.ok(calls[0].id.startsWith("call_"));
        assert.equal(functionOf(calls[0]).name, "get_weather");
        assertWeatherArguments(functionOf(calls[0]).arguments);
      }
    });

    it("required: always a call of one of the tools, with that tool's arguments", async () => {
      const completion = await openai.chat.completions.create({
        model: slug,
        messages: question,
        tools,
        tool_choice: "required",
        temperature: 1,
        n: 6,
        max_tokens: 100,
      });
      for (const choice of completion.choices) {
        const call = functionOf(choice.message.tool_calls![0]);
        assert.ok(["get_weather", "get_time"].includes(call.name), call.name);
        const args = JSON.parse(call.arguments);
        if (call.name === "get_weather") assertWeatherArguments(call.arguments);
        else assert.ok(typeof args.zone === "string" && args.zone.length <= 8, call.arguments);
      }
    });

    it("none yields text; auto yields text or a valid call", async () => {
      const none = await openai.chat.completions.create({ model: slug, messages: question, tools, tool_choice: "none", max_tokens: 20 });
      assert.equal(none.choices[0].message.tool_calls, undefined);
      assert.ok(none.choices[0].message.content!.length > 0);
      const auto = await openai.chat.completions.create({ model: slug, messages: question, tools, temperature: 1, n: 6, max_tokens: 100 });
      for (const choice of auto.choices) {
        if (choice.message.tool_calls) {
          assert.equal(choice.finish_reason, "tool_calls");
          const call = functionOf(choice.message.tool_calls[0]);
          if (call.name === "get_weather") assertWeatherArguments(call.arguments);
          else assert.equal(call.name, "get_time");
        } else {
          assert.ok(typeof choice.message.content === "string" && !choice.message.content.startsWith("<"), choice.message.content ?? "");
        }
      }
    });

    it("a round trip completes: call, tool result, final answer (not streamed)", async () => {
      const first = await openai.chat.completions.create({ model: slug, messages: question, tools: [weatherTool], tool_choice: "required", max_tokens: 100 });
      const call = first.choices[0].message.tool_calls![0];
      const messages: ChatCompletionMessageParam[] = [
        ...question,
        first.choices[0].message as ChatCompletionMessageParam,
        { role: "tool", tool_call_id: call.id, content: "Sunny" },
      ];
      const final = await openai.chat.completions.create({ model: slug, messages, tools: [weatherTool], max_tokens: 10, tool_choice: "none" });
      assert.equal(final.choices[0].finish_reason === "stop" || final.choices[0].finish_reason === "length", true);
      assert.ok(final.choices[0].message.content!.length > 0);
      assert.ok(final.usage!.prompt_tokens > first.usage!.prompt_tokens, "the call and its result are part of the prompt");
    });

    it("a round trip completes streamed, with deltas as OpenAI sends them", async () => {
      const stream = await openai.chat.completions.create({
        model: slug,
        messages: question,
        tools: [weatherTool],
        tool_choice: "required",
        max_tokens: 100,
        stream: true,
      });
      const deltas: OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta.ToolCall[] = [];
      let finish: string | null = null;
      for await (const chunk of stream) {
        deltas.push(...(chunk.choices[0]?.delta.tool_calls ?? []));
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      assert.equal(finish, "tool_calls");
      assert.equal(deltas[0].index, 0);
      assert.ok(deltas[0].id?.startsWith("call_"));
      assert.equal(deltas[0].type, "function");
      assert.equal(deltas[0].function?.name, "get_weather");
      assert.equal(deltas[0].function?.arguments, "");
      for (const later of deltas.slice(1)) assert.equal(later.id, undefined);
      const args = deltas.map((d) => d.function?.arguments ?? "").join("");
      assertWeatherArguments(args);

      // The openai client's own stream helper assembles the same call.
      const runner = openai.chat.completions.stream({ model: slug, messages: question, tools: [weatherTool], tool_choice: "required", max_tokens: 100 });
      const assembled = await runner.finalChatCompletion();
      const call = assembled.choices[0].message.tool_calls![0];
      assertWeatherArguments(functionOf(call).arguments);
      const answer = await openai.chat.completions.create({
        model: slug,
        stream: true,
        max_tokens: 10,
        messages: [...question, { role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: call.id, content: "Sunny" }],
      });
      let text = "";
      for await (const chunk of answer) text += chunk.choices[0]?.delta.content ?? "";
      assert.ok(text.length > 0);
    });

    it("response_format anyOf is enforced (node-llama-cpp's compiler turned anyOf into null)", async () => {
      const schema = {
        type: "object",
        properties: { pick: { anyOf: [{ enum: CITIES }, { type: "boolean" }] } },
        required: ["pick"],
        additionalProperties: false,
      };
      const completion = await openai.chat.completions.create({
        model: slug,
        messages: question,
        temperature: 1,
        n: 5,
        max_tokens: 40,
        response_format: { type: "json_schema", json_schema: { name: "pick", schema } },
      });
      for (const choice of completion.choices) {
        const pick = JSON.parse(choice.message.content!).pick;
        assert.ok(CITIES.includes(pick) || typeof pick === "boolean", choice.message.content!);
      }
    });

    it("refuses by name what it cannot enforce or does not know", async () => {
      const refused = async (body: Record<string, unknown>, param: string) => {
        const response = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ messages: question, max_tokens: 4, ...body }),
        });
        const answer = (await response.json()) as { error: { param: string | null; message: string } };
        assert.equal(response.status, 400, JSON.stringify(answer));
        assert.equal(answer.error.param, param, answer.error.message);
      };
      await refused(
        { tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { n: { type: "integer", minimum: 1 } } } } }] },
        "tools",
      );
      await refused({ tools, tool_choice: { type: "function", function: { name: "nope" } } }, "tool_choice");
      await refused({ tool_choice: "required" }, "tool_choice");
      await refused({ messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id");
      await refused({ functions: [{ name: "f" }] }, "functions");
    });
  });

  describe("through an OpenAI-compatible upstream", () => {
    // The upstream is this cloud's own edge (a real OpenAI-compatible server with tools):
    // tools must reach it unchanged and its tool_calls come back mapped.
    let viaUpstream: OpenAI;
    before(async () => {
      const env = { ...process.env, SVC_CLOUD_URL: cloud.cloudUrl, SVC_HOME: cloud.home };
      await promisify(execFile)(
        process.execPath,
        [cliPath, "models", "add", "--upstream", `${cloud.edgeUrl}/d/${slug}/v1`, "--name", "loopback", "--data", cloud.dataDir],
        { env },
      );
      const { client } = await newAccount(cloud);
      await client.createDeployment({ slug: "via-upstream", target: { kind: "base_model", name: "loopback" }, authMode: "none" });
      viaUpstream = new OpenAI({ baseURL: `${cloud.edgeUrl}/d/via-upstream/v1`, apiKey: "unused", maxRetries: 0 });
    });

    it("forwards tools and maps the upstream's tool_calls back, streamed and not, and a round trip completes", async () => {
      const named = { type: "function" as const, function: { name: "get_weather" } };
      const completion = await viaUpstream.chat.completions.create({
        model: "x",
        messages: question,
        tools,
        tool_choice: named,
        temperature: 1,
        max_tokens: 100,
      });
      assert.equal(completion.choices[0].finish_reason, "tool_calls");
      const call = completion.choices[0].message.tool_calls![0];
      assert.equal(functionOf(call).name, "get_weather");
      assertWeatherArguments(functionOf(call).arguments);

      const stream = await viaUpstream.chat.completions.create({ model: "x", messages: question, tools, tool_choice: named, max_tokens: 100, stream: true });
      let args = "";
      let finish: string | null = null;
      for await (const chunk of stream) {
        for (const d of chunk.choices[0]?.delta.tool_calls ?? []) args += d.function?.arguments ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      assert.equal(finish, "tool_calls");
      assertWeatherArguments(args);

      const final = await viaUpstream.chat.completions.create({
        model: "x",
        max_tokens: 10,
        tools,
        tool_choice: "none",
        messages: [...question, completion.choices[0].message as ChatCompletionMessageParam, { role: "tool", tool_call_id: call.id, content: "Sunny" }],
      });
      assert.ok(final.choices[0].message.content!.length > 0);
    });
  });

  describe("responses", () => {
    it("responses.create answers, not streamed and streamed, and its output parses", async () => {
      const response = await openai.responses.create({ model: slug, input: "Tell me about cats.", instructions: "Be brief.", max_output_tokens: 20 });
      assert.equal(response.object, "response");
      assert.ok(["completed", "incomplete"].includes(response.status!));
      assert.ok(response.output_text.length > 0);
      assert.equal(response.output[0].type, "message");
      assert.ok(response.usage!.output_tokens > 0);

      const stream = await openai.responses.create({
        model: slug,
        input: [{ role: "user", content: "Tell me about cats." }],
        max_output_tokens: 20,
        stream: true,
      });
      const types: string[] = [];
      let deltas = "";
      let completed: OpenAI.Responses.Response | null = null;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === "response.output_text.delta") deltas += event.delta;
        if (event.type === "response.completed" || event.type === "response.incomplete") completed = event.response;
      }
      assert.deepEqual(types.slice(0, 4), ["response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"]);
      assert.ok(types.includes("response.output_text.done") && types.includes("response.output_item.done"));
      assert.ok(completed && deltas.length > 0);
      assert.equal((completed.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0].type, "output_text");
      assert.equal(((completed.output[0] as OpenAI.Responses.ResponseOutputMessage).content[0] as OpenAI.Responses.ResponseOutputText).text, deltas);
    });

    it("text.format json_schema and function tools, with a function_call_output round trip", async () => {
      const json = await openai.responses.create({
        model: slug,
        input: "Weather?",
        temperature: 1,
        max_output_tokens: 60,
        text: { format: { type: "json_schema", name: "weather", schema: weatherTool.function.parameters!, strict: true } },
      });
      assertWeatherArguments(json.output_text);

      const responsesTool = { type: "function" as const, name: "get_weather", parameters: weatherTool.function.parameters!, strict: true };
      const called = await openai.responses.create({
        model: slug,
        input: "Weather in Paris?",
        tools: [responsesTool],
        tool_choice: { type: "function", name: "get_weather" },
        temperature: 1,
      });
      const call = called.output.find((item) => item.type === "function_call") as OpenAI.Responses.ResponseFunctionToolCall;
      assert.equal(call.name, "get_weather");
      assertWeatherArguments(call.arguments);
      const final = await openai.responses.create({
        model: slug,
        max_output_tokens: 10,
        tools: [responsesTool],
        tool_choice: "none",
        input: [{ role: "user", content: "Weather in Paris?" }, call, { type: "function_call_output", call_id: call.call_id, output: "Sunny" }],
      });
      assert.ok(final.output_text.length > 0);

      const streamed = await openai.responses.create({ model: slug, input: "Weather?", tools: [responsesTool], tool_choice: "required", stream: true });
      let args = "";
      for await (const event of streamed) if (event.type === "response.function_call_arguments.done") args = event.arguments;
      assertWeatherArguments(args);
    });

    it("refuses previous_response_id by name, and answers in the host form too", async () => {
      const response = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/responses`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ input: "hi", previous_response_id: "resp_1" }),
      });
      const answer = (await response.json()) as { error: { param: string } };
      assert.equal(response.status, 400);
      assert.equal(answer.error.param, "previous_response_id");

      // fetch cannot set Host and *.localhost does not resolve everywhere: a raw request to loopback.
      const port = new URL(cloud.edgeUrl).port;
      const body = JSON.stringify({ input: "Tell me about cats.", max_output_tokens: 5 });
      const viaHost = await rawExchange(
        cloud.edgeUrl,
        `POST /v1/responses HTTP/1.1\r\nhost: ${slug}.localhost:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      assert.equal(viaHost.status, 200, viaHost.body);
      assert.match(viaHost.body, /"object":"response"/);
    });
  });
});
