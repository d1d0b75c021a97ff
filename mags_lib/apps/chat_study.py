"""Does the chat keep a person's changing facts across restarts? The persona conversations,
told to `ChatSession` one session at a time, the chat closed and reopened between sessions.

    python -m mags_lib.apps.chat_study --split dev --n 3
        [--out results/12_conversations/chat_restart_dev.json]

Each persona conversation (`conversations/persona.py`: a person's home, job, car... changing
across sessions, said directly, indirectly or as corrections, with chit-chat and repeats) is
replayed as a person would type it: the user's own turns only, dated with their session's day,
`ChatConfig.user` the persona's name; the chat answers each (the answer model's reply is its
turn, as in `python -m mags_lib chat`). After every session the chat is closed (saved) and a new
`ChatSession` opens the memory from disk. After the last session, the memory reopened once more,
the conversation's questions are asked in the chat and its replies scored as notebook 12
scores answers (`evaluation/qa_metrics.persona_scores`: the current value named, a stale value
named, the earlier value named, "I don't know" where nothing was said).

The chat's models are what `python -m mags_lib chat` loads (`ChatConfig` defaults: notebook
04's ask and write models, the embedded base model answering). The gold never reaches the
chat: it scores the replies. Issue 40's criterion: "a chat session that follows item 2's
pattern answers the updated fact after a restart".
"""

from __future__ import annotations

import json
import time
from datetime import date, datetime
from pathlib import Path
from typing import Any


def _day(when: str) -> date:
    from mags_lib.conversations.types import day_of

    return datetime.strptime(day_of(when), "%d %B %Y").date()


def _reply(session: Any, text: str) -> str:
    return "".join(session.reply(text)).strip()


def replay(conv: Any, memory_dir: str | Path, *, llms: dict[str, Any], few_shot: dict[str, bool],
           embedder: Any, **chat: Any) -> dict[str, Any]:
    """Tell `conv` to the chat session by session, restarting between sessions, then ask its
    questions after one more restart; the replies, what was written, and the memory's size."""
    from mags_lib.apps.chat import ChatConfig, ChatSession

    user = conv.speakers[0]
    cfg = ChatConfig(memory=str(memory_dir), user=user, **chat)

    def reopen() -> ChatSession:
        return ChatSession.open(cfg, llms=llms, few_shot=few_shot, embedder=embedder,
                                say=lambda _: None)

    writes, restarts = [], 0
    for s in sorted(conv.sessions):
        session = reopen()
        restarts += 1
        for turn in conv.sessions[s]:
            if turn.speaker != user:
                continue  # the chat's own replies take the assistant's place
            day = _day(turn.date)
            session.today = lambda day=day: day
            reply = _reply(session, turn.text)
            write = session.last.get("write", {})
            writes.append({"turn": turn.dia_id, "said": turn.text, "raw": write.get("raw"),
                           "applied": write.get("applied"), "reply": reply})
        session.close()
    session = reopen()
    answers = []
    for i, qa in enumerate(conv.qa):
        reply = _reply(session, qa.question)
        answers.append({"question": i, "kind": qa.kind, "asked": qa.question,
                        "answer": qa.answer, "stale": list(qa.stale), "prediction": reply,
                        "recalled": [x["text"] for x in session.last.get("recalled", [])]})
    size = len(session.memory.graph)
    session.close()
    return {"conversation": conv.sample_id, "user": user, "restarts": restarts,
            "writes": writes, "answers": answers, "memory_nodes": size}


def chat_restart_study(split: str = "dev", n: int = 3, *, out: str | Path | None = None,
                       workdir: str | Path | None = None, llms: dict[str, Any] | None = None,
                       few_shot: dict[str, bool] | None = None, embedder: Any = None,
                       **chat: Any) -> dict[str, Any]:
    """`replay` on `n` persona conversations of `split`; persona scores over all questions."""
    import tempfile

    from mags_lib.apps.chat import ChatConfig, load_embedder, load_models
    from mags_lib.evaluation.qa_metrics import persona_scores
    from mags_lib.tasks.registry import get_task

    if split == "train":
        raise ValueError("the chat study reads dev or test personas, never training ones")
    t0 = time.perf_counter()
    base = ChatConfig(**chat)
    if llms is None:
        llms, few_shot = load_models(base, say=lambda _: None)
    embedder = embedder if embedder is not None else load_embedder(base.embedder)
    convs = get_task("persona").episodes(split, n)
    runs, scored = [], []
    with tempfile.TemporaryDirectory(dir=workdir) as tmp:
        for conv in convs:
            run = replay(conv, Path(tmp) / conv.sample_id, llms=llms,
                         few_shot=few_shot or {}, embedder=embedder, **chat)
            runs.append(run)
            scored += [{"qa": qa, "prediction": a["prediction"]}
                       for qa, a in zip(conv.qa, run["answers"], strict=True)]
    report = {"split": split, "chat": dict(chat),
              "conversations": [c.sample_id for c in convs],
              "models": {role: getattr(llm, "name", str(llm)) for role, llm in llms.items()},
              "scores": persona_scores(scored),
              "changed_facts": persona_scores(r for r in scored
                                              if r["qa"].kind == "current" and r["qa"].stale),
              "runs": runs,
              "seconds": round(time.perf_counter() - t0, 1)}
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(json.dumps(report, indent=1))
    return report


def main(argv: list[str] | None = None) -> None:
    import argparse

    from mags_lib.agents.history_lines import PAST_LINES
    from mags_lib.apps.chat import ChatConfig
    from mags_lib.paths import RESULTS_DIR

    ap = argparse.ArgumentParser(prog="python -m mags_lib.apps.chat_study",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", default="dev", choices=["dev", "test"])
    ap.add_argument("--n", type=int, default=3, help="persona conversations")
    ap.add_argument("--out", default=None,
                    help="JSON report (default results/12_conversations/chat_restart_SPLIT.json)")
    ap.add_argument("--versions", type=int, default=ChatConfig.versions,
                    help="earlier versions shown before each recalled fact (ChatConfig.versions)")
    ap.add_argument("--past-versions", type=int, default=ChatConfig.past_versions,
                    help="earlier versions shown for a question about the past "
                         "(ChatConfig.past_versions)")
    ap.add_argument("--past-lines", default=ChatConfig.past_lines, choices=list(PAST_LINES),
                    help="a changed fact's earlier versions beside it or in its place, for a "
                         "question about the past (ChatConfig.past_lines)")
    ap.add_argument("--history", type=int, default=ChatConfig.history,
                    help="past exchanges in the answer prompt (ChatConfig.history)")
    ap.add_argument("--answer-block", default=ChatConfig.answer_block,
                    help="block the answer's lines come from (ChatConfig.answer_block)")
    ap.add_argument("--recall-message", action=argparse.BooleanOptionalAction,
                    default=ChatConfig.recall_message,
                    help="recall the message beside the ask queries (ChatConfig.recall_message)")
    ap.add_argument("--grounding-words", action=argparse.BooleanOptionalAction,
                    default=ChatConfig.grounding_words,
                    help="refuse facts sharing no word with the message (ChatConfig)")
    args = ap.parse_args(argv)
    out = args.out or RESULTS_DIR / "12_conversations" / f"chat_restart_{args.split}.json"
    report = chat_restart_study(args.split, args.n, out=out, versions=args.versions,
                                past_versions=args.past_versions, past_lines=args.past_lines,
                                history=args.history,
                                answer_block=args.answer_block,
                                recall_message=args.recall_message,
                                grounding_words=args.grounding_words)
    print(json.dumps({"scores": report["scores"], "changed_facts": report["changed_facts"],
                      "seconds": report["seconds"],
                      "models": report["models"], "out": str(out)}, indent=1))


if __name__ == "__main__":
    main()
