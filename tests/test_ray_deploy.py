"""The Ray deploy path exactly as written (ports aside): deploy/compose.ray.yaml's head command, the README's join
command for another machine, and an app process sending a run through the ray:// address, all with the token
authentication the compose file turns on. Ray is optional: skipped without it (scripts/test.sh installs it)."""
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import textwrap
import time

import pytest
import yaml

from conftest import ROOT, _free_port

pytestmark = pytest.mark.slow


def compose_ray() -> dict:
    return yaml.safe_load((ROOT / "deploy" / "compose.ray.yaml").read_text())


def join_command() -> list[str]:
    """The README's command for a GPU machine joining the head, as written there (after its export line)."""
    lines = [l.strip() for l in (ROOT / "README.md").read_text().splitlines()]
    assert any(l.startswith("export RAY_AUTH_MODE=token RAY_AUTH_TOKEN=") for l in lines)
    return shlex.split(next(l for l in lines if l.startswith("ray start --address=")).split("#")[0])


def test_the_commands_the_readme_and_compose_give_are_the_ones_tested():
    head = compose_ray()["services"]["ray-head"]
    assert head["command"][:3] == ["ray", "start", "--head"] and "--ray-client-server-port=10001" in head["command"]
    assert head["environment"]["RAY_AUTH_MODE"] == "token" and head["network_mode"] == "host"
    assert join_command() == ["ray", "start", "--address=HEAD_HOST:6379", "--num-gpus=1", "--block"]
    app = compose_ray()["services"]["app1"]["environment"]
    assert app["RNNLAB_RAY_ADDRESS"] == "ray://host.docker.internal:10001" and app["RAY_AUTH_MODE"] == "token"


def ray_command() -> str | None:
    """The `ray` command of the Python running the tests (the venv scripts/test.sh made, whose bin/ is not on
    PATH), else one on PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), "ray")
    return beside if os.access(beside, os.X_OK) else shutil.which("ray")


def test_a_head_a_joining_node_and_an_app_as_deployed(tmp_path):
    ray = ray_command()
    if ray is None:
        pytest.skip("Ray is optional: pip install -r requirements-ray.txt")
    gcs, client = _free_port(), _free_port()   # free ports here; the compose file's are 6379 and 10001
    env = dict(os.environ, RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(32))
    head_cmd = [ray if part == "ray" else re.sub(r"--port=6379", f"--port={gcs}", re.sub(r"=10001", f"={client}", part))
                for part in compose_ray()["services"]["ray-head"]["command"]]
    head = subprocess.Popen(head_cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 90
        while subprocess.run([ray, "status", f"--address=127.0.0.1:{gcs}"], env=env,
                             capture_output=True).returncode != 0:
            assert time.time() < deadline and head.poll() is None, "the head did not start"
            time.sleep(1)
        join = [ray if w == "ray" else w.replace("HEAD_HOST:6379", f"127.0.0.1:{gcs}") for w in join_command()
                if w != "--block"]   # as written, but returning once the node is up
        joined = subprocess.run(join, env=env, capture_output=True, text=True, timeout=120)
        assert joined.returncode == 0, joined.stderr[-2000:]
        app = textwrap.dedent("""
            import sys
            sys.path.insert(0, "tests")
            import ray
            from core.runs.config import TrainConfig
            from core.runs.jobs import JobManager
            from test_training import SMALL, TEXT
            manager = JobManager(mode="ray")
            nodes = len([n for n in ray.nodes() if n["Alive"]])
            job = manager.submit(TrainConfig(**{**SMALL, "epochs": 2, "device": "cpu"}), TEXT, "s1")
            job.thread.join(150)
            print("RESULT", manager.gpus, nodes, job.status, job.result.final.epoch if job.result else None)
        """)
        done = subprocess.run([sys.executable, "-c", app], cwd=ROOT, capture_output=True, text=True, timeout=240,
                              env=dict(env, RNNLAB_RAY_ADDRESS=f"ray://127.0.0.1:{client}",
                                       RNNLAB_RUNS_DIR=str(tmp_path / "runs")))
        result = next((l for l in done.stdout.splitlines() if l.startswith("RESULT")), done.stderr[-2000:])
        assert result == "RESULT 1 2 finished 2", result   # the joined node's GPU, two nodes, a run trained
    finally:
        subprocess.run([ray, "stop", "--force"], env=env, capture_output=True, timeout=60)
        head.terminate()
        try:
            head.wait(30)
        except subprocess.TimeoutExpired:
            head.kill()
