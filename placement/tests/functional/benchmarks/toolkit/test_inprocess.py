import webob

from benchmarks.toolkit import inprocess


def test_application_serves_a_migrated_database(tmp_path):
    # (log_file sets up the process's logging: test_request_cpu, which
    # runs that benchmark, covers it.)
    db = inprocess.database('sqlite:///%s' % (tmp_path / 'p.sqlite'))
    app = inprocess.application(db, metrics__enabled=False)
    req = webob.Request.blank('/resource_classes')
    req.headers['x-auth-token'] = 'admin'
    req.headers['openstack-api-version'] = 'placement 1.2'
    response = req.get_response(app)
    assert response.status_int == 200
    # The standard classes: loadapp's start-up work ran.
    assert {'name': 'VCPU', 'links': [
        {'rel': 'self', 'href': '/resource_classes/VCPU'}]} in (
            response.json['resource_classes'])
