"""``list_providers(in_tree=...)`` alone: one tree, whichever member is
named, with every member's root and parent."""

import uuid

from placement.objects import resource_provider as rp_obj


def _new(ctx, name, parent=None):
    return rp_obj.create(ctx, str(uuid.uuid4()), name, parent)


def test_any_member_names_its_whole_tree_and_only_it(ctx):
    root = _new(ctx, 'root')
    other = _new(ctx, 'other-root')
    child = _new(ctx, 'child', root.uuid)
    _new(ctx, 'other-child', other.uuid)
    leaf = _new(ctx, 'leaf', child.uuid)
    for member in (root, child, leaf):
        listed = rp_obj.list_providers(ctx, in_tree=member.uuid)
        assert [(p.name, p.root_provider_uuid, p.parent_provider_uuid)
                for p in listed] == [
            ('root', root.uuid, None),
            ('child', root.uuid, root.uuid),
            ('leaf', root.uuid, child.uuid)]
        assert listed == rp_obj.list_providers(
            ctx, in_tree=member.uuid, name=None, required=None)
    assert [p.name for p in rp_obj.list_providers(
        ctx, in_tree=other.uuid)] == ['other-root', 'other-child']


def test_an_unknown_member_names_nothing(ctx):
    _new(ctx, 'root')
    assert rp_obj.list_providers(ctx, in_tree=str(uuid.uuid4())) == []


def test_other_filters_still_apply(ctx):
    root = _new(ctx, 'root')
    _new(ctx, 'child', root.uuid)
    assert [p.name for p in rp_obj.list_providers(
        ctx, in_tree=root.uuid, name='child')] == ['child']
