"""A long-running tool that observes the run's cancellation signal (S23).

Run it: ``python examples/cancel_long_running_tool.py``. The scripted model asks for a crawl of
1,000 pages; after a moment the caller aborts. The tool notices ``ctx.signal`` between pages and
stops, so the run returns promptly with ``status="interrupted"`` — a tool that kept going after
the abort would break the cancellation contract.
"""

from __future__ import annotations

import asyncio

import robota
from robota.testing import ScriptedProvider


@robota.tool
async def crawl(pages: int, ctx: robota.ToolContext) -> str:
    """Crawl a number of pages.

    Args:
        pages: How many pages to fetch.
    """
    done = 0
    for _ in range(pages):
        if ctx.signal.aborted:  # observe the signal between units of work
            return f"stopped after {done} of {pages} pages"
        await asyncio.sleep(0.01)  # stands in for one page fetch
        done += 1
    return f"crawled {done} pages"


async def main() -> None:
    model = ScriptedProvider([[("crawl", {"pages": 1000})], "never reached"])
    async with robota.Agent(provider=model, model="any", tools=[crawl]) as agent:
        controller = robota.AbortController()
        run = asyncio.create_task(agent.run("Crawl the site", signal=controller.signal))
        await asyncio.sleep(0.2)
        controller.abort("user pressed stop")
        result = await run
        print("status:", result.status)
        print("tool result:", agent.history[-1].content)


if __name__ == "__main__":
    asyncio.run(main())
