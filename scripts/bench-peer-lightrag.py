# LightRAG's side of `npm run bench:peer` (scripts/bench-peer.ts starts it in the pinned venv).
# Builds a LightRAG instance pointed at the benchmark's fake OpenAI-compatible server, then
# answers commands read from stdin, one per line, with one `BENCH {json}` line on stdout each:
#   ingest  -> inserts every passage of --corpus, waits for the pipeline, reports the graph
#   warmup  -> one query, so that the timed ones find everything loaded
#   query   -> retrieves the context (hybrid, no answer) for every question of --questions
#   quit
# The bench reads this process's CPU time from /proc around each command.
import argparse
import asyncio
import json
import re
import sys
import threading
import time

import numpy as np
from lightrag import LightRAG, QueryParam
from lightrag.base import DocStatus
from lightrag.llm.openai import openai_complete_if_cache, openai_embed
from lightrag.utils import EmbeddingFunc, Tokenizer

parser = argparse.ArgumentParser()
parser.add_argument("--base-url", required=True)
parser.add_argument("--corpus", required=True, help="JSONL of {id, title, text}")
parser.add_argument("--questions", required=True, help="JSONL of {question}")
parser.add_argument("--work-dir", required=True)
parser.add_argument("--max-async", type=int, required=True)
parser.add_argument("--parallel-insert", type=int, required=True)
parser.add_argument("--dimensions", type=int, required=True)
args = parser.parse_args()


class WordPieces:
    """A reversible word-level tokenizer: tiktoken downloads its tables at first use, and
    this machine has no route to them. One token per word, like tiktoken's order of size."""

    def __init__(self):
        self._lock = threading.Lock()
        self._ids: dict[str, int] = {}
        self._pieces: list[str] = []

    def __deepcopy__(self, memo):
        return self

    def encode(self, content: str) -> list[int]:
        pieces = re.findall(r"\s*\S+|\s+", content)
        with self._lock:
            out = []
            for piece in pieces:
                token = self._ids.get(piece)
                if token is None:
                    token = self._ids[piece] = len(self._pieces)
                    self._pieces.append(piece)
                out.append(token)
            return out

    def decode(self, tokens: list[int]) -> str:
        with self._lock:
            return "".join(self._pieces[t] for t in tokens)


async def complete(prompt, system_prompt=None, history_messages=None, **kwargs):
    return await openai_complete_if_cache(
        "fake-model",
        prompt,
        system_prompt=system_prompt,
        history_messages=history_messages or [],
        base_url=args.base_url,
        api_key="bench",
        **kwargs,
    )


async def embed(texts: list[str]) -> np.ndarray:
    return await openai_embed.func(texts, model="fake-embed", base_url=args.base_url, api_key="bench")


def jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def say(payload):
    sys.stdout.write("BENCH " + json.dumps(payload) + "\n")
    sys.stdout.flush()


async def ingest(rag: LightRAG):
    passages = jsonl(args.corpus)
    await rag.ainsert([f"{p['title']}\n{p['text']}" for p in passages], ids=[p["id"] for p in passages], file_paths=[f"{p['id']}.txt" for p in passages])
    counts = await rag.doc_status.get_status_counts()
    docs = await rag.doc_status.get_docs_by_statuses([DocStatus.PROCESSED])
    chunks = sum(d.chunks_count or 0 for d in docs.values())
    nodes = await rag.chunk_entity_relation_graph.get_all_nodes()
    edges = await rag.chunk_entity_relation_graph.get_all_edges()
    say({"documents": counts, "chunks": chunks, "entities": len(nodes), "relationships": len(edges)})


QUERY = QueryParam(mode="hybrid", only_need_context=True)


async def warm_up(rag: LightRAG):
    await rag.aquery("warm up", param=QUERY)
    say({"warm": True})


async def query(rag: LightRAG):
    questions = [q["question"] for q in jsonl(args.questions)]
    latencies = []
    empty = 0
    for question in questions:
        started = time.perf_counter()
        context = await rag.aquery(question, param=QUERY)
        latencies.append((time.perf_counter() - started) * 1000)
        if not context:
            empty += 1
    say({"latenciesMs": latencies, "emptyContexts": empty})


async def main():
    rag = LightRAG(
        working_dir=args.work_dir,
        llm_model_func=complete,
        llm_model_name="fake-model",
        llm_model_max_async=args.max_async,
        max_parallel_insert=args.parallel_insert,
        embedding_func=EmbeddingFunc(embedding_dim=args.dimensions, func=embed, model_name="fake-embed"),
        embedding_func_max_async=args.max_async,
        tokenizer=Tokenizer("word-pieces", WordPieces()),
        entity_extract_max_gleaning=0,
    )
    await rag.initialize_storages()
    say({"ready": True})
    try:
        for line in sys.stdin:
            command = line.strip()
            if command == "ingest":
                await ingest(rag)
            elif command == "warmup":
                await warm_up(rag)
            elif command == "query":
                await query(rag)
            elif command == "quit":
                break
            else:
                say({"error": f"unknown command {command!r}"})
    finally:
        await rag.finalize_storages()


asyncio.run(main())
