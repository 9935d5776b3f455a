"""One agent's session with pfm's MCP tools, driven by the official MCP
Python SDK (`mcp`, pinned in scripts/mcp-requirements.txt), over either
transport:

    python mcp_scenario.py stdio PFM_BINARY DATA_DIR
    python mcp_scenario.py http URL TOKEN

It lists the tools, remembers a value, revises it, recalls (only the new
value), reads the key's history, stages a plan (kind: speculation) and
sees it disclosed only on request, forgets the key, recalls (gone), sends
bad arguments (tool errors; the server keeps serving) and retries a call
with its request_id (replayed, not written twice). Every call and its
answer is printed as one JSON line (the README's transcript); any
unexpected answer fails with exit status 1. crates/cli/tests/mcp.rs runs it.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

KEY = {"entity": "Alex Rivera", "slot": "meeting_time"}
PEOPLE = ["Alex Rivera"]


def check(cond, what, answer):
    if not cond:
        print(f"FAILED: {what}: {json.dumps(answer)}", file=sys.stderr)
        sys.exit(1)


async def call(session, tool, arguments):
    result = await session.call_tool(tool, arguments)
    answer = result.structured_content
    print(json.dumps({"tool": tool, "arguments": arguments, "is_error": result.is_error, "result": answer}))
    # The text content carries the same JSON, for clients that read text.
    check(json.loads(result.content[0].text) == answer, "text and structured content agree", answer)
    return result.is_error, answer


async def scenario(session):
    init = await session.initialize()
    check(init.server_info.name == "pfm", "server name", init.server_info.name)
    tools = await session.list_tools()
    names = sorted(t.name for t in tools.tools)
    print(json.dumps({"tools": names}))
    check(names == ["forget", "history", "recall", "remember"], "tool list", names)
    for t in tools.tools:
        check(len(t.description) > 200, f"{t.name} has a description for a model", t.description)
        check(t.input_schema.get("type") == "object", f"{t.name} has an input schema", t.input_schema)
    remember = next(t for t in tools.tools if t.name == "remember")
    check("key" in remember.input_schema["properties"], "remember takes a key", remember.input_schema)

    err, first = await call(session, "remember", {
        "text": "The standup with Alex Rivera is moved to 9:30am.",
        "participants": PEOPLE, "at": "2025-06-02"})
    check(not err and first["outcome"] == "created", "a new value is created", first)
    err, second = await call(session, "remember", {
        "text": "The standup with Alex Rivera is moved to 10:45am.",
        "participants": PEOPLE, "at": "June 9, 2025 9:00 AM"})
    check(not err and second["outcome"] == "superseded" and second["previous"] == first["fact"],
          "the revision supersedes the first value", second)

    err, recalled = await call(session, "recall", {
        "context": "when is the standup with Alex", "participants": PEOPLE, "at": "2025-06-10"})
    check(not err and "10:45am" in recalled["block"] and "9:30am" not in recalled["block"],
          "recall shows only the new value", recalled)
    check(recalled["facts"][0]["id"] == second["fact"], "the block's fact is the revision", recalled)

    err, history = await call(session, "history", {"key": KEY})
    statuses = [v["state"]["status"] for v in history["history"]]
    check(not err and statuses == ["active", "superseded"], "history lists both versions", history)

    # A plan (kind: speculation, as an LLM client that knows says it) is
    # staged, never current: recall shows it only when asked to disclose
    # pending plans; history lists it beside the key's current value.
    home = {"entity": "Alex Rivera", "slot": "home_city"}
    err, lives = await call(session, "remember", {
        "text": "Alex Rivera lives in Lisbon.", "participants": PEOPLE, "key": home,
        "value": "Lisbon", "at": "2025-06-03"})
    check(not err and lives["outcome"] == "created", "a current value", lives)
    err, plan = await call(session, "remember", {
        "text": "Alex Rivera might move to Seattle next year.", "participants": PEOPLE,
        "key": home, "value": "Seattle", "kind": "speculation", "at": "2025-06-04"})
    check(not err and plan["outcome"] == "staged", "a plan is staged", plan)
    where = {"context": "where does Alex Rivera live", "participants": PEOPLE, "at": "2025-06-05"}
    err, plain = await call(session, "recall", where)
    check(not err and "Lisbon" in plain["block"] and "eattle" not in plain["block"],
          "a plan is not a current value", plain)
    err, disclosed = await call(session, "recall", {**where, "disclose": ["pending"]})
    check(not err and "(planned: seattle" in disclosed["block"], "a plan is disclosed on request", disclosed)
    err, history = await call(session, "history", {"key": home})
    versions = [(v["body"]["value"], v["state"]["status"]) for v in history["history"]]
    related = [(v["body"]["value"], v["state"]["status"]) for v in history["related"]]
    check(not err and versions == [("lisbon", "active")] and related == [("seattle", "pending")],
          "history shows the value and its plan", history)

    err, forgotten = await call(session, "forget", {"key": KEY})
    check(not err and sorted(forgotten["erased"]) == sorted([first["fact"], second["fact"]]),
          "forget erases both versions", forgotten)
    err, gone = await call(session, "recall", {
        "context": "when is the standup with Alex", "participants": PEOPLE})
    check(not err and "standup" not in gone["block"]
          and all(f.get("key") != "alex rivera/meeting_time" for f in gone["facts"]),
          "recall finds nothing of the forgotten key", gone)

    err, bad = await call(session, "recall", {"context": "standup", "k": "six"})
    check(err and bad["error"]["code"] == "invalid_body", "a wrong type is a tool error", bad)
    err, bad = await call(session, "forget", {"fact": 1, "entity": "Alex Rivera"})
    check(err and bad["error"]["code"] == "invalid_input", "forget takes exactly one target", bad)
    err, bad = await call(session, "history", {"fact": 999})
    check(err and bad["error"]["code"] == "unknown_fact", "an unknown fact is a tool error", bad)

    # Still serving after the errors (the Lisbon fact and its plan are
    # still there too).
    err, after = await call(session, "remember", {"text": "Alex Rivera prefers tea.", "participants": PEOPLE})
    check(not err and after["outcome"] == "created", "the server keeps serving", after)

    # A retry with the same request_id is answered from the first call's
    # receipt and writes nothing.
    retried = {"text": "Alex Rivera's badge number is 4471.", "participants": PEOPLE,
               "request_id": "retry-7f3a"}
    err, once = await call(session, "remember", retried)
    check(not err and once["replayed"] is False, "a first request_id is written", once)
    err, again = await call(session, "remember", retried)
    check(not err and again["replayed"] is True and (again["fact"], again["seq"]) == (once["fact"], once["seq"]),
          "a retried request_id is replayed", again)


async def main():
    transport = sys.argv[1]
    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.argv[2], args=["mcp", "--data-dir", sys.argv[3], "--tenant", "me"],
            env={"RUST_LOG": "warn"})
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await scenario(session)
    elif transport == "http":
        url, token = sys.argv[2], sys.argv[3]
        async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await scenario(session)
    else:
        sys.exit(f"unknown transport {transport!r}: stdio or http")
    print(json.dumps({"passed": transport}))


asyncio.run(main())
