"""The shared metrics directory and the capacity cache across processes."""

import multiprocessing
import os
import subprocess
import sys

import pytest

from placement.observability import metrics_files


@pytest.fixture
def tmp_base(tmp_path, monkeypatch):
    monkeypatch.setenv('TMPDIR', str(tmp_path))
    # Recorded even when absent, so that what choose_directory exports
    # is removed again after the test.
    monkeypatch.setitem(os.environ, metrics_files.ENV, '')
    monkeypatch.delenv(metrics_files.ENV)
    import tempfile
    monkeypatch.setattr(tempfile, 'tempdir', None)
    return tmp_path


def test_a_lone_process_needs_no_directory(tmp_base, monkeypatch):
    monkeypatch.delitem(sys.modules, 'gunicorn', raising=False)
    monkeypatch.delitem(sys.modules, 'uwsgi', raising=False)
    assert metrics_files.choose_directory() is None
    assert metrics_files.ENV not in os.environ


def test_an_operator_directory_is_used(tmp_base, monkeypatch):
    given = tmp_base / 'given'
    monkeypatch.setenv(metrics_files.ENV, str(given))
    assert metrics_files.choose_directory() == str(given)
    assert given.is_dir()


def test_workers_of_one_master_share_a_private_directory(tmp_base,
                                                         monkeypatch):
    monkeypatch.setitem(sys.modules, 'gunicorn', object())
    monkeypatch.setattr(metrics_files, '_cmdline', lambda pid: 'gunicorn')
    first = metrics_files.choose_directory()
    monkeypatch.delenv(metrics_files.ENV)
    second = metrics_files.choose_directory()
    assert first == second
    assert os.path.dirname(first) == str(tmp_base)
    assert os.stat(first).st_mode & 0o777 == 0o700
    assert os.path.basename(first).startswith(
        'placement-metrics-%d-' % os.getppid())


def test_directories_of_exited_masters_are_removed(tmp_base, monkeypatch):
    exited = subprocess.Popen(['true'])
    exited.wait()
    stale = tmp_base / ('placement-metrics-%d-12345' % exited.pid)
    stale.mkdir()
    (stale / 'counter_1.db').write_bytes(b'x')
    reused = tmp_base / ('placement-metrics-%d-1' % os.getpid())
    reused.mkdir()
    unrelated = tmp_base / 'placement-metrics-notes'
    unrelated.mkdir()
    monkeypatch.setitem(sys.modules, 'gunicorn', object())
    monkeypatch.setattr(metrics_files, '_cmdline', lambda pid: 'gunicorn')
    live = metrics_files.choose_directory()
    assert not stale.exists()
    # Same pid, other start time: a previous process whose pid came back.
    assert not reused.exists()
    assert unrelated.exists()
    assert os.path.isdir(live)


def test_a_directory_others_can_write_is_refused(tmp_base, monkeypatch):
    monkeypatch.setitem(sys.modules, 'gunicorn', object())
    monkeypatch.setattr(metrics_files, '_cmdline', lambda pid: 'gunicorn')
    path = tmp_base / ('placement-metrics-%d-%d' % (
        os.getppid(), metrics_files._start_time(os.getppid())))
    path.mkdir()
    path.chmod(0o777)
    with pytest.raises(metrics_files.UnsafeDirectory):
        metrics_files.choose_directory()


def _count_computations(directory, marker, results):
    cache = metrics_files.SharedCache(directory, 'capacity')

    def compute():
        with open(marker, 'a') as out:
            out.write('x')
        return b'%d' % os.getpid()

    results.put(cache.get(compute, max_age=60))


def test_the_cache_is_computed_once_for_all_processes(tmp_path):
    marker = tmp_path / 'computed'
    context = multiprocessing.get_context('fork')
    results = context.Queue()
    processes = [context.Process(target=_count_computations,
                                 args=(str(tmp_path), str(marker), results))
                 for _ in range(4)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(30)
    values = [results.get(timeout=5) for _ in processes]
    assert marker.read_text() == 'x'
    assert len(set(values)) == 1


def test_the_cache_expires(tmp_path):
    now = [1000.0]
    computed = []
    for directory in (str(tmp_path), None):
        cache = metrics_files.SharedCache(directory, 'capacity')
        computed.clear()

        def compute():
            computed.append(1)
            return b'%d' % len(computed)

        assert cache.get(compute, 15, clock=lambda: now[0]) == b'1'
        now[0] += 10
        assert cache.get(compute, 15, clock=lambda: now[0]) == b'1'
        now[0] += 10
        assert cache.get(compute, 15, clock=lambda: now[0]) == b'2'


def _write_counter(directory, pid, value):
    from prometheus_client import mmap_dict
    values = mmap_dict.MmapedDict(
        os.path.join(str(directory), 'counter_%d.db' % pid))
    key = mmap_dict.mmap_key('placement_demo', 'placement_demo_total',
                             [], [], 'demo')
    values.write_value(key, value, 0)
    values.close()


def test_a_file_being_created_is_skipped_by_the_exposition(tmp_path):
    """A worker creates its file empty and sizes it just after; a scrape
    in between still answers with everyone else's figures."""
    from prometheus_client import exposition
    _write_counter(tmp_path, 101, 3.0)
    _write_counter(tmp_path, 102, 4.0)
    (tmp_path / 'counter_103.db').write_bytes(b'')
    text = exposition.generate_latest(
        metrics_files.MergedFiles(str(tmp_path))).decode()
    assert 'placement_demo_total 7.0' in text
