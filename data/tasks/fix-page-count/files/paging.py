"""Pagination helpers for the listing endpoints."""


def page_count(total_items, per_page):
    """Number of pages needed to show total_items, per_page items per page.

    A partially filled last page still counts as a page; 0 items means 0 pages.
    per_page is always >= 1.
    """
    return total_items // per_page
