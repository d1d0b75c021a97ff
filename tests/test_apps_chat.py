"""The chat session (apps/chat.py, chat_cli.py) with scripted role models: routing, what is
written and recalled, persistence, snapshots and rollback, forgetting, bad input."""

from __future__ import annotations

import pytest

from mags_lib.apps.chat import ChatConfig, ChatSession, graph_path, snapshots_dir
from mags_lib.apps.chat_cli import build_parser, command, why_lines
from mags_lib.embed import HashingEmbedder
from mags_lib.errors import MagsError
from mags_lib.llm import Completion


class Scripted:
    """A role model that answers every call with `text`, and counts the calls."""

    def __init__(self, text: str, name: str = "scripted"):
        self.text, self.name, self.calls = text, name, []

    def chat(self, messages, **kw):
        self.calls.append(messages)
        return Completion(self.text, finish_reason="stop")


def _session(tmp_path, write="<engram>\nadd semantic 0.9: Ana lives in Porto.\n",
             ask="<recall>\nquery: where Ana lives\n</recall>", memory="mem",
             say=lambda s: None) -> ChatSession:
    llms = {"answer": Scripted("Ana lives in Porto."), "ask": Scripted(ask),
            "write": Scripted(write)}
    cfg = ChatConfig(memory=str(tmp_path / memory), embedder="hashing")
    return ChatSession.open(cfg, llms=llms, embedder=HashingEmbedder(), say=say)


def _say(session, text):
    return "".join(session.reply(text))


def test_a_statement_is_written_a_question_is_asked_and_both_are_answered(tmp_path):
    from datetime import date

    s = _session(tmp_path)
    s.today = lambda: date(2026, 11, 28)
    assert _say(s, "My sister Ana lives in Porto.") == "Noted: Ana lives in Porto."  # stored
    assert not s.llms["answer"].calls  # a statement's reply is what was stored
    assert s.last["roles"] == ["write", "answer"]
    assert s.last["write"]["applied"]["added"]  # the write model's fact
    texts = {s.memory.node(n)["text"]: s.memory.node(n)["block"] for n in s.memory.graph}
    said = "[28 November 2026] User: My sister Ana lives in Porto."  # as a conversation's turn
    assert texts == {said: "episodic", "Ana lives in Porto.": "semantic"}
    assert said in s.llms["write"].calls[-1][-1]["content"]  # what the write model read
    assert not s.llms["ask"].calls
    _say(s, "Where does Ana live?")
    assert s.last["roles"] == ["ask", "answer"] and s.last["ask"]["queries"] == ["where Ana lives"]
    assert "User: Where does Ana live?" in s.llms["ask"].calls[-1][-1]["content"]
    recalled = [r["text"] for r in s.last["recalled"]]
    assert "[28 November 2026] Ana lives in Porto." in recalled  # dated with the day it was said
    assert {r["block"] for r in s.last["recalled"]} == {"semantic"}  # facts, not the messages
    s.few_shot["write"] = True  # the base model writing: 'auto' recalls from every block
    assert s.answer_block() is None
    asked = s.llms["answer"].calls[-1]
    assert len(asked) == 2  # a question: the recalled lines and the question, no past exchanges
    assert "Ana lives in Porto." in asked[-1]["content"]  # the recalled lines reach the prompt
    assert asked[-1]["content"].endswith("Question: Where does Ana live?\nShort answer:")
    assert len(s.memory.graph) == 2  # a question is not stored
    assert any("ask model queries: where Ana lives" in line for line in why_lines(s.last))


def test_memory_survives_a_restart(tmp_path):
    s = _session(tmp_path)
    _say(s, "My sister Ana lives in Porto.")
    s.close()
    again = _session(tmp_path)
    hits = again.memory.recall("Ana Porto", 3, learn=False)
    assert any("Porto" in h.text for h in hits)
    assert again.memory.step_count == 1  # the pending step ran on close


def test_a_save_interrupted_between_its_renames_is_recovered_and_said(tmp_path):
    import os

    from mags_lib.memory.persistence import backup_of

    s = _session(tmp_path)
    _say(s, "My sister Ana lives in Porto.")
    s.close()
    backup = backup_of(tmp_path / "mem")
    os.replace(tmp_path / "mem", backup)  # what a crash between the two renames leaves
    said: list[str] = []
    again = _session(tmp_path, say=said.append)
    assert f"recovered the memory from the backup {backup} (a save was interrupted)" in said
    assert len(again.memory.graph) == 2 and not backup.exists()
    assert (tmp_path / "mem" / "manifest.json").is_file()  # back in place, before any save
    said.clear()
    _session(tmp_path, say=said.append)
    assert not any("recovered" in line for line in said)


def test_an_empty_directory_starts_a_new_memory(tmp_path):
    (tmp_path / "mem").mkdir()
    s = _session(tmp_path)
    assert len(s.memory.graph) == 0
    from mags_lib.memory import DIALOGUE_MEMORY, MemoryConfig  # a chat reads a dialogue

    assert s.memory.config.to_dict() == MemoryConfig.from_dict(DIALOGUE_MEMORY).to_dict()
    _say(s, "My sister Ana lives in Porto.")
    assert (tmp_path / "mem" / "manifest.json").is_file()


def test_an_unsigned_memory_is_refused_with_the_fix(tmp_path):
    from mags_lib.errors import CorruptFileError

    s = _session(tmp_path)
    _say(s, "My sister Ana lives in Porto.")
    (tmp_path / "mem" / "manifest.json").unlink()
    with pytest.raises(CorruptFileError) as err:
        _session(tmp_path)
    assert "unsigned save" in err.value.cause and "allow_unsigned=True" in err.value.fix
    assert "--allow-unsigned" in err.value.fix
    assert (tmp_path / "mem" / "graph.json").is_file()  # left as it was
    cfg = ChatConfig(memory=str(tmp_path / "mem"), embedder="hashing", allow_unsigned=True)
    llms = {r: Scripted("Ana lives in Porto.") for r in ("answer", "ask", "write")}
    opened = ChatSession.open(cfg, llms=llms, embedder=HashingEmbedder())
    assert len(opened.memory.graph) == 2
    opened.save()  # saving signs it: it opens without the flag from now on
    assert len(_session(tmp_path).memory.graph) == 2


def test_the_command_line_flag_is_a_switch():
    from mags_lib.apps.chat_cli import build_parser

    assert build_parser().parse_args(["--allow-unsigned"]).allow_unsigned is True
    assert build_parser().parse_args([]).allow_unsigned is False


def test_a_fact_that_shares_no_word_with_the_message_is_refused(tmp_path):
    """The write model's invention for a greeting is not stored (grounding_words, on by
    default); the message's own fact is; with the option off the invention is stored."""
    invent = "<engram>\nadd semantic 0.9: Ana is wearing a smartwatch.\n"
    s = _session(tmp_path, write=invent)
    _say(s, "Hey, it's me.")
    assert s.last["write"]["ungrounded"] == ["Ana is wearing a smartwatch."]
    assert s.last["write"]["applied"].startswith("nothing: no fact the write model wrote")
    assert [s.memory.node(n)["block"] for n in s.memory.graph] == ["episodic"]
    s2 = _session(tmp_path, write=invent, memory="mem2")
    s2.cfg.grounding_words = False
    _say(s2, "Hey, it's me.")
    assert "Ana is wearing a smartwatch." in {s2.memory.node(n)["text"] for n in s2.memory.graph}


def test_a_trained_reader_answers_questions_and_a_statement_gets_what_was_stored(tmp_path):
    s = _session(tmp_path, write="<engram>\n</engram>")
    s.llms["reader"] = Scripted("<answer>Porto</answer>")
    assert _say(s, "Nice weather today.") == "Noted (nothing new to remember)."
    assert _say(s, "Where does Ana live?") == "Porto"  # the reader's tags taken off
    assert not s.llms["answer"].calls
    s.cfg.statement_reply = "model"
    assert _say(s, "Nice weather today.") == "Ana lives in Porto."  # the answer model's reply
    with pytest.raises(MagsError, match="statement_reply"):
        ChatConfig(statement_reply="sometimes")


def test_a_question_is_recalled_beside_the_ask_models_queries(tmp_path):
    s = _session(tmp_path)
    _say(s, "Where does Ana live?")
    assert s.last["queries"] == ["where Ana lives", "Where does Ana live?"]
    s.cfg.recall_message = False
    _say(s, "Where does Ana live?")
    assert s.last["queries"] == ["where Ana lives"]


def test_malformed_write_changes_nothing_but_the_episode(tmp_path):
    s = _session(tmp_path, write="I think I should add something")
    _say(s, "Ana has a cat called Miso.")
    assert s.last["write"]["applied"].startswith("nothing: the write model's block did not")
    assert [s.memory.node(n)["block"] for n in s.memory.graph] == ["episodic"]


def test_snapshot_rollback_forget_and_commands(tmp_path):
    s = _session(tmp_path)
    _say(s, "My sister Ana lives in Porto.")
    out, _ = command(s, "/snapshot before")
    assert (snapshots_dir(s.path) / "before").is_dir() and "saved" in out[0]
    s.llms["write"].text = "<engram>\nadd semantic 0.9: Ana has a cat called Miso.\n"
    _say(s, "Ana has a cat called Miso.")
    assert any("Miso" in line for line in command(s, "/recall Miso cat")[0])
    command(s, "/rollback before")
    assert not any("Miso" in s.memory.node(n)["text"] for n in s.memory.graph)
    assert command(s, "/snapshots")[0] == ["  before"]
    out, _ = command(s, "/forget 0")
    assert out == ["  forgot #0"] and not s.memory.is_valid(0)
    assert s.memory.node(0)["text"]  # history kept
    out, _ = command(s, "/graph")
    assert graph_path(s.path).is_file() and str(graph_path(s.path)) in out[0]
    assert "episodic" in "\n".join(command(s, "/memory")[0])
    _say(s, "Bo plays the cello.")
    step = s.memory.step_count
    command(s, "/good")
    assert s.pending_reward == 1.0
    _, done = command(s, "/quit")
    assert done and s.pending_reward is None and s.last_step_reward == 1.0
    assert s.memory.step_count == step + 1


def test_save_as_and_load_switch_files(tmp_path):
    s = _session(tmp_path)
    _say(s, "My sister Ana lives in Porto.")
    command(s, f"/save {tmp_path / 'copy'}")
    assert s.path == tmp_path / "copy" and (tmp_path / "copy" / "graph.json").is_file()
    other = _session(tmp_path, memory="other")
    _say(other, "Bo plays the cello.")
    other.close()
    command(s, f"/load {tmp_path / 'other'}")
    texts = " | ".join(s.memory.node(n)["text"] for n in s.memory.graph)
    assert "Bo plays the cello." in texts and "My sister Ana lives in Porto." not in texts


@pytest.mark.parametrize("line, cause", [
    ("/rollback nope", "no snapshot 'nope'"), ("/snapshot ../x", "bad snapshot name"),
    ("/load", "/load needs a directory"),
    ("/forget 99", "no node 99"), ("/good", "no reply to reward yet"),
    ("/load /nonexistent/mem", "no memory at /nonexistent/mem"),
])
def test_bad_commands_name_the_cause_and_the_fix(tmp_path, line, cause):
    s = _session(tmp_path)
    with pytest.raises(MagsError) as err:
        command(s, line)
    assert cause in err.value.cause and err.value.fix


def test_bad_config_and_a_file_in_place_of_the_memory(tmp_path):
    with pytest.raises(MagsError, match="backend"):
        ChatConfig(backend="telepathy")
    with pytest.raises(MagsError, match="at least 1"):
        ChatConfig(k=0)
    (tmp_path / "mem").write_text("not a memory")
    with pytest.raises(MagsError, match="is a file"):
        _session(tmp_path)
    assert (tmp_path / "mem").read_text() == "not a memory"  # nothing lost


def test_an_unreachable_server_is_an_error_that_loses_nothing(tmp_path):
    from mags_lib.apps.chat import load_models

    cfg = ChatConfig(memory=str(tmp_path / "mem"), backend="openai", model="served",
                     base_url="http://127.0.0.1:9/v1", embedder="hashing")
    llms, few_shot = load_models(cfg, say=lambda s: None)
    assert few_shot == {"answer": False, "ask": True, "write": True,  # served: worked examples
                        "reader": True}
    s = ChatSession.open(cfg, llms=llms, few_shot=few_shot, embedder=HashingEmbedder(),
                         say=lambda s: None)
    with pytest.raises(MagsError) as err:
        _say(s, "My sister Ana lives in Porto.")
    assert "cannot reach the LLM server at http://127.0.0.1:9/v1" in err.value.cause
    assert "start the server" in err.value.fix
    assert len(s.memory.graph) == 0 and s.turn == 0  # the failed turn was not half-applied
    s.close()


def test_an_interrupted_turn_is_applied_whole_or_not_at_all(tmp_path):
    s = _session(tmp_path)
    _say(s, "My sister Ana lives in Porto.")
    nodes, step, turn = set(s.memory.graph), s.memory.step_count, s.turn
    reply = s.reply("Ana has a cat called Miso.")
    next(reply)  # the write is applied, the answer has started
    assert len(s.memory.graph) > len(nodes)
    reply.close()  # what Ctrl-C in the middle of the answer does (chat_cli closes the reply)
    assert set(s.memory.graph) == nodes and s.memory.step_count == step and s.turn == turn
    assert s.last == {"aborted": True, "turn": turn + 1}
    _say(s, "Ana has a cat called Miso.")  # the chat goes on, the pending step runs once
    assert s.memory.step_count == step + 1 and s.turn == turn + 1


def test_an_unknown_command_prints_the_help(tmp_path):
    out, done = command(_session(tmp_path), "/frobnicate")
    assert out[0] == "unknown command /frobnicate" and "/rollback <name>" in out[1] and not done


def test_a_foreign_memory_is_left_untouched_and_a_new_one_offered(tmp_path, monkeypatch):
    from mags_lib.apps import chat_cli
    from mags_lib.apps.chat import ChatSession as Session

    foreign = tmp_path / "mem"
    foreign.mkdir()
    (foreign / "graph.json").write_text('{"something": "else"}')
    cfg = ChatConfig(memory=str(foreign), embedder="hashing")
    opened = Session.open
    monkeypatch.setattr(Session, "open", classmethod(lambda cls, c, say=print: opened(
        c, llms={r: Scripted("x") for r in ("answer", "ask", "write")},
        embedder=HashingEmbedder(), say=say)))
    monkeypatch.setattr("sys.stdin.isatty", lambda: True, raising=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "y")
    session = chat_cli.open_session(cfg)
    assert session.path == tmp_path / "mem-new" and len(session.memory.graph) == 0
    assert (foreign / "graph.json").read_text() == '{"something": "else"}'
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    assert chat_cli.open_session(cfg) is None


def test_the_write_model_is_shown_stored_facts_not_the_raw_messages(tmp_path):
    s = _session(tmp_path)
    _say(s, "My sister Ana lives in Porto.")
    _say(s, "Ana moved to Lisbon.")
    shown = s.llms["write"].calls[-1][-1]["content"]
    assert "Ana lives in Porto." in shown  # the semantic fact the write model may update
    assert "My sister Ana lives in Porto." not in shown  # the episode stays out of its view


def test_an_updated_fact_is_recalled_after_the_version_it_replaced(tmp_path):
    from datetime import date

    s = _session(tmp_path)
    s.today = lambda: date(2026, 5, 8)
    _say(s, "My sister Ana lives in Porto.")
    s.close()
    s = _session(tmp_path, write="<engram>\nupdate semantic 0.9: Ana lives in Lisbon.\n")
    s.today = lambda: date(2026, 6, 2)
    _say(s, "Ana moved to Lisbon.")
    assert s.last["write"]["applied"]["superseded"]
    s.close()
    llms = s.llms
    s = ChatSession.open(ChatConfig(memory=str(tmp_path / "mem"), embedder="hashing", versions=1,
                                    past_lines="both"),
                         llms=llms, embedder=HashingEmbedder(), say=lambda _: None)
    _say(s, "Where did Ana live before?")
    lines = [(r["text"], r["valid"]) for r in s.last["recalled"]]
    assert lines[-2:] == [("[8 May 2026] (no longer true) Ana lives in Porto.", False),
                          ("[2 June 2026] Ana lives in Lisbon.", True)]  # the current one last
    assert "  old [semantic] [8 May 2026] (no longer true)" in "\n".join(why_lines(s.last))
    s.close()
    s = _session(tmp_path)  # the defaults: versions 0, past_versions 1, past_lines earlier
    _say(s, "Where does Ana live now?")  # a question about now: current facts only
    assert [r["text"] for r in s.last["recalled"]][-1] == "[2 June 2026] Ana lives in Lisbon."
    assert not any("no longer true" in r["text"] for r in s.last["recalled"])
    _say(s, "Where did Ana live before?")  # about the past: the earlier version in its place
    texts = [r["text"] for r in s.last["recalled"]]
    assert texts[-1] == "[8 May 2026] (no longer true) Ana lives in Porto."
    assert not any("Lisbon" in t for t in texts)
    s.close()
    s = ChatSession.open(ChatConfig(memory=str(tmp_path / "mem"), embedder="hashing",
                                    past_versions=0),
                         llms=llms, embedder=HashingEmbedder(), say=lambda _: None)
    _say(s, "Where did Ana live before?")  # past_versions 0: current facts only, always
    assert not any("no longer true" in r["text"] for r in s.last["recalled"])
    with pytest.raises(MagsError, match="versions"):
        ChatConfig(versions=-1)
    with pytest.raises(MagsError, match="versions"):
        ChatConfig(past_versions=-1)
    with pytest.raises(MagsError, match="past_lines"):
        ChatConfig(past_lines="latest")


def test_with_questions_chat_a_question_gets_the_chat_prompt_and_past_exchanges(tmp_path):
    llms = {"answer": Scripted("Ana lives in Porto."),
            "ask": Scripted("<recall>\nquery: where Ana lives\n</recall>"),
            "write": Scripted("<engram>\nadd semantic 0.9: Ana lives in Porto.\n")}
    cfg = ChatConfig(memory=str(tmp_path / "mem"), embedder="hashing", questions="chat",
                     answer_block="")
    s = ChatSession.open(cfg, llms=llms, embedder=HashingEmbedder(), say=lambda _: None)
    _say(s, "My sister Ana lives in Porto.")
    _say(s, "Where does Ana live?")
    asked = s.llms["answer"].calls[-1]
    assert "Ana lives in Porto." in asked[0]["content"]  # the memory in the system prompt
    assert [m["role"] for m in asked] == ["system", "user", "assistant", "user"]
    assert "episodic" in {r["block"] for r in s.last["recalled"]}  # the message as said, too
    with pytest.raises(MagsError, match="questions"):
        ChatConfig(questions="sometimes")


def test_a_reply_to_a_statement_stops_at_its_first_line_unless_told_otherwise(tmp_path):
    class Recording(Scripted):
        def chat(self, messages, **kw):
            self.kw = kw
            return super().chat(messages, **kw)

    for one_line, stop in ((True, ["\n"]), (False, None)):
        llms = {"answer": Recording("Porto."), "ask": Scripted("<recall>\nquery: Ana\n</recall>"),
                "write": Scripted("<engram>\n")}
        cfg = ChatConfig(memory=str(tmp_path / f"m{one_line}"), embedder="hashing",
                         one_line=one_line, statement_reply="model")
        s = ChatSession.open(cfg, llms=llms, embedder=HashingEmbedder(), say=lambda _: None)
        _say(s, "Ana lives in Porto.")
        assert llms["answer"].kw.get("stop") == stop
        _say(s, "Where does Ana live?")  # a short answer stops at a blank line either way
        assert llms["answer"].kw.get("stop") == ["\nQuestion:", "\n\n"]
    assert build_parser().parse_args(["--no-one-line"]).one_line is False
