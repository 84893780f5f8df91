"""Placement: an implementation of the OpenStack Placement API."""
