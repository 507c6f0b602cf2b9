"""The canary test of issue 36: plant a URL password, an API key and `.env` values, run the
CLI every way a user would (runs that answer and runs that fail, against a server that
echoes the credentials it was sent, at -v and at --debug, an eval, `board`, `traces
export`), then grep every file the runs wrote and every line they printed: no canary, in any
encoding a credential travels in, may appear."""

from __future__ import annotations

import base64
import urllib.parse
from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from testing.scripted import Reply, ScriptedServer, role_of, turn_of
from tests.support.fakes import calls
from tests.support.harness import ROOT, app_command, app_env, needle_options, run_cli
from tests.support.studio import langgraph_dev

pytestmark = [pytest.mark.slow, pytest.mark.integration]

URL_PASSWORD = "cAnArY-url-pw-7f3a%21x"  # percent-encoded in the URL: "cAnArY-url-pw-7f3a!x"
API_KEY = "sk-cAnArY-key-91bd"
DOTENV_KEY = "sk-cAnArY-dotenv-55ce"
DOTENV_PASSWORD = "cAnArY-dotenv-pw-e2c0"


def forms(secret: str, user: str = "paravt") -> set[str]:
    """Every spelling a credential can take on its way: raw, percent-decoded and -encoded,
    and inside a Basic auth token."""
    raw = {secret, urllib.parse.unquote(secret), urllib.parse.quote(secret, safe="")}
    basic = {base64.b64encode(f"{user}:{s}".encode()).decode() for s in raw}
    return raw | basic


CANARIES = forms(URL_PASSWORD) | forms(API_KEY) | forms(DOTENV_KEY) | forms(DOTENV_PASSWORD, "u")


def responder(server_box: list):
    def reply(body):
        text = str(body["messages"])
        if "ECHO" in text:  # a proxy that tells the client what it sent, then fails
            seen = server_box[0].authorizations[-1]
            return Reply(f"refused Authorization: {seen} (also {seen})", status=500)
        if role_of(body) == "sub_agent":
            return "a red circle at 12 seconds"
        if role_of(body) == "main" and turn_of(body):
            return "The note says red.</think><answer>A</answer>"
        return calls((0, 20), (20, 40))[len("<think>") :]

    return reply


def test_no_credential_is_written_or_printed_anywhere(tmp_path, needle_video):
    box: list = []
    keyed = ScriptedServer(responder(box), api_key=API_KEY)
    with keyed, ScriptedServer(responder(box)) as open_server:
        keyed_url = keyed.base_url
        with_password = open_server.base_url.replace("://", f"://paravt:{URL_PASSWORD}@")
        dotenv = tmp_path / "settings.env"
        dotenv.write_text(
            f"PARAVT_API_KEY={DOTENV_KEY}\n"
            f"PARAVT_ENDPOINT={open_server.base_url.replace('://', f'://u:{DOTENV_PASSWORD}@')}\n"
        )
        homes = {name: tmp_path / name for name in ("key", "password", "dotenv")}
        run = ["run", "--video", needle_video.path, "--overview-frames", "4"]
        printed: list[str] = []

        def cli(server, home, *argv, env_file="", **env):
            box[:] = [server]
            command = app_command(*argv)
            command[command.index("--env-file") + 1] = env_file
            done = run_cli(command, app_env(home, **env), timeout=300)
            printed.extend([done.stdout, done.stderr])
            return done

        for flag in ("-v", "--debug"):
            key = {"PARAVT_API_KEY": API_KEY}
            assert (
                cli(
                    keyed,
                    homes["key"],
                    "--endpoint",
                    keyed_url,
                    flag,
                    *run,
                    "--question",
                    "Colour?",
                    **key,
                ).returncode
                == 0
            )
            cli(
                keyed,
                homes["key"],
                "--endpoint",
                keyed_url,
                flag,
                *run,
                "--question",
                "ECHO?",
                **key,
            )
            assert (
                cli(
                    open_server,
                    homes["password"],
                    "--endpoint",
                    with_password,
                    flag,
                    *run,
                    "--question",
                    "Colour?",
                ).returncode
                == 0
            )
            cli(
                open_server,
                homes["password"],
                "--endpoint",
                with_password,
                flag,
                *run,
                "--question",
                "ECHO?",
            )
            dead = f"http://paravt:{URL_PASSWORD}@127.0.0.1:9/v1"
            cli(open_server, homes["password"], "--endpoint", dead, flag, *run, "--question", "Q?")
            assert (
                cli(
                    open_server,
                    homes["dotenv"],
                    flag,
                    *run,
                    "--question",
                    "Colour?",
                    env_file=str(dotenv),
                ).returncode
                == 0
            )
        evals = tmp_path / "evals"
        options = [f"--option={k}={v}" for k, v in needle_options(1).items()]
        cli(
            open_server,
            homes["dotenv"],
            "-v",
            "eval",
            "run",
            "--task",
            "needle",
            "--data-dir",
            str(tmp_path / "needle"),
            "--out",
            str(evals),
            "--max-turns",
            "1",
            *options,
            env_file=str(dotenv),
        )
        exported = tmp_path / "exported"
        for name, home in homes.items():
            assert cli(open_server, home, "board").returncode == 0
            out = exported / f"{name}.jsonl"
            exporting = cli(open_server, home, "-v", "traces", "export", "--out", str(out))
            assert exporting.returncode == 0
            assert out.stat().st_size > 0
    assert len(keyed.authorizations) > 4 and set(keyed.authorizations) == {f"Bearer {API_KEY}"}
    assert any(a.startswith("Basic ") for a in open_server.authorizations)

    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != dotenv]
    assert any(p.name == "checkpoints.sqlite" for p in files)
    assert any(p.name == "board.sqlite" for p in files) and any(evals.rglob("samples.jsonl"))
    found = {
        str(path.relative_to(tmp_path)): sorted(c for c in CANARIES if c.encode() in data)
        for path in files
        for data in [_all_bytes(path)]
    }
    assert {k: v for k, v in found.items() if v} == {}
    echoed = [
        line
        for line in (exported / "password.jsonl").read_text().splitlines()
        if "refused Authorization: ***" in line
    ]
    assert echoed, "the echoing server's error is stored, masked"
    said = "\n".join(printed)
    assert "paravt:***@" in said and "***" in said  # the runs did show the masked forms
    assert sorted(c for c in CANARIES if c in said) == []


def _all_bytes(path: Path) -> bytes:
    return path.read_bytes()


def test_a_langgraph_server_keeps_no_credential_in_its_state_logs_or_files(tmp_path, needle_video):
    """The graph served by `langgraph dev` (Studio, Agent Chat UI): the endpoint's password
    and key reach neither the threads' state, nor the server's log and persistence, nor the
    board, when a run answers and when a server that echoes them fails it."""
    box: list = []
    with ScriptedServer(responder(box)) as model:
        box[:] = [model]
        endpoint = model.base_url.replace("://", f"://paravt:{URL_PASSWORD}@")
        media = Path(needle_video.path).parent
        with langgraph_dev(tmp_path, endpoint, media, API_KEY) as (url, _):
            client = get_sync_client(url=url, timeout=180)
            states = []
            for text in ("Colour?", "ECHO?"):
                thread = client.threads.create()["thread_id"]
                client.runs.wait(
                    thread,
                    "paravt",
                    input={
                        "messages": [{"type": "human", "content": f"{needle_video.path} {text}"}]
                    },
                    raise_error=False,
                )
                states.append(str(client.threads.get_state(thread)))
                states.append(str(client.runs.list(thread)))
    assert any(a.startswith("Basic ") for a in model.authorizations)
    assert sorted(c for c in CANARIES if c in "\n".join(states)) == []
    persisted = [p for p in (ROOT / ".langgraph_api").glob("*") if p.is_file()]
    files = [p for p in tmp_path.rglob("*") if p.is_file()] + persisted
    assert any(p.suffix == ".log" for p in files) and any(p.name == "board.sqlite" for p in files)
    found = {str(p): [c for c in CANARIES if c.encode() in p.read_bytes()] for p in files}
    assert {k: v for k, v in found.items() if v} == {}
    log = next(p for p in files if p.suffix == ".log").read_text()
    assert "paravt:***@" in log  # the failed run's retries were logged, masked
