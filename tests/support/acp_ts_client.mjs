// A client written with the official ACP TypeScript SDK (npm @agentclientprotocol/sdk): spawns the agent
// command given as JSON in argv[2], runs the steps in argv[3] ({cwd, prompts: [text, ...], cancelAfterChunk}),
// and prints one JSON object: {initialize, sessionId, stops: [stopReason...], updates: [update...], asked:
// [toolCallId...]} (permission requests are answered with their first option, allow once).
// Run from a directory where the SDK is installed (tests/e2e/test_acp_ts_sdk.py copies it there).
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const [command, ...args] = JSON.parse(process.argv[2]);
const steps = JSON.parse(process.argv[3]);
const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], cwd: steps.cwd });
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const updates = [];
let firstChunk;
const chunkSeen = new Promise((resolve) => { firstChunk = resolve; });

const asked = [];
const app = acp.client({ name: "agent-forge-ts-test" })
  .onNotification("session/update", (ctx) => {
    updates.push(ctx.params.update);
    if (ctx.params.update.sessionUpdate === "agent_message_chunk") firstChunk();
  })
  .onRequest("session/request_permission", (ctx) => {  // the user allows each call once
    asked.push(ctx.params.toolCall.toolCallId);
    return { outcome: { outcome: "selected", optionId: ctx.params.options[0].optionId } };
  });

const result = await app.connectWith(stream, async (ctx) => {
  const initialize = await ctx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  });
  const { sessionId } = await ctx.request("session/new", { cwd: steps.cwd, mcpServers: [] });
  const stops = [];
  for (const text of steps.prompts) {
    const turn = ctx.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] });
    if (steps.cancelAfterChunk) {
      await chunkSeen;
      await ctx.notify("session/cancel", { sessionId });
    }
    stops.push((await turn).stopReason);
  }
  return { initialize, sessionId, stops, updates, asked };
});
process.stdout.write(JSON.stringify(result) + "\n");
child.stdin.end();
child.on("exit", (code) => process.exit(code ?? 1));
