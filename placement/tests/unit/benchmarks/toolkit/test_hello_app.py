"""The hello application: gunicorn's own cost, without ours."""

from benchmarks.toolkit import hello_app


def test_the_hello_application_answers_json():
    started = []
    body = b''.join(hello_app.application(
        {}, lambda status, headers: started.append((status, headers))))
    assert started == [('200 OK', [('Content-Type', 'application/json'),
                                   ('Content-Length', str(len(body)))])]
    assert body == b'{"ok": true}'


def test_the_body_comes_from_the_file_named(tmp_path):
    answer = tmp_path / 'answer.json'
    answer.write_bytes(b'{"allocation_requests": []}')
    assert hello_app.body({hello_app.BODY_FILE_ENV: str(answer)}) == (
        b'{"allocation_requests": []}')
    assert hello_app.body({}) == hello_app.BODY
